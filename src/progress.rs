//! The progress bar: on stderr, only when stderr is a terminal, not with
//! `--quiet`, and only once a run has lasted about a second (quick runs
//! never flash a bar).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

const DELAY: Duration = Duration::from_secs(1);

/// A byte-counting bar that shows itself after [`DELAY`] if it may.
pub fn bar(quiet: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    if quiet || !std::io::stderr().is_terminal() {
        return bar;
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {bytes}/{total_bytes} {bar:30} {binary_bytes_per_sec} eta {eta}",
        )
        .expect("the template is valid"),
    );
    let shown = bar.downgrade();
    std::thread::spawn(move || {
        std::thread::sleep(DELAY);
        if let Some(bar) = shown.upgrade() {
            if !bar.is_finished() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
        }
    });
    bar
}
