//! Progress bars: on stderr, only when stderr is a terminal, not with
//! `--quiet`, and only once a run has lasted about a second (quick runs
//! never flash a bar). A bar names its input; with a known total it shows
//! the position, the rate and an ETA, without one (stdin, a pipe) a spinner
//! with the bytes read and the rate, and no invented ETA. Several inputs
//! share one bar counting the files done.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

const DELAY: Duration = Duration::from_secs(1);

const KNOWN_TOTAL: &str =
    "{spinner} {prefix} {bytes}/{total_bytes} {bar:30} {binary_bytes_per_sec} eta {eta}";
const UNKNOWN_TOTAL: &str = "{spinner} {prefix} {bytes} read, {binary_bytes_per_sec}";
const FILES: &str = "{spinner} {pos}/{len} files {bar:30} {msg}";

/// A byte-counting bar without a label.
pub fn bar(quiet: bool) -> ProgressBar {
    labelled(quiet, "")
}

/// A byte-counting bar naming `label` (the input), shown after [`DELAY`]
/// if it may be; its style is chosen then, by whether the total is known.
pub fn labelled(quiet: bool, label: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    if quiet || !std::io::stderr().is_terminal() {
        return bar;
    }
    bar.set_prefix(label.to_string());
    show_later(&bar, |bar| {
        let template = if bar.length().is_some() {
            KNOWN_TOTAL
        } else {
            UNKNOWN_TOTAL
        };
        bar.set_style(ProgressStyle::with_template(template).expect("the template is valid"));
        bar.enable_steady_tick(Duration::from_millis(200));
    });
    bar
}

/// One bar over `files` inputs, counting the files done (`inc` it as each
/// ends); hidden as [`labelled`] is.
pub fn files(quiet: bool, files: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(files as u64), ProgressDrawTarget::hidden());
    if quiet || !std::io::stderr().is_terminal() {
        return bar;
    }
    bar.set_style(ProgressStyle::with_template(FILES).expect("the template is valid"));
    show_later(&bar, |bar| {
        bar.enable_steady_tick(Duration::from_millis(200))
    });
    bar
}

fn show_later(bar: &ProgressBar, style: impl FnOnce(&ProgressBar) + Send + 'static) {
    let shown = bar.downgrade();
    std::thread::spawn(move || {
        std::thread::sleep(delay());
        if let Some(bar) = shown.upgrade() {
            if !bar.is_finished() {
                style(&bar);
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
        }
    });
}

/// [`DELAY`], or `MEMPROF_PROGRESS_DELAY_MS` (for tests of the bar itself).
fn delay() -> Duration {
    std::env::var("MEMPROF_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(DELAY, Duration::from_millis)
}
