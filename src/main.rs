//! The `memprof` binary: parse arguments, run, map the outcome to an exit
//! status (0 success, 1 a budget exceeded, 2 error; a closed stdout pipe
//! ends quietly with 0).

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

// Decoding allocates and frees millions of small vectors and strings;
// mimalloc does that markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// The error and its causes on one line. Many of memprof's errors already
/// quote their cause; a cause whose text the line already ends with is not
/// repeated.
fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    // Names from archives and file names may hold control characters: the
    // line reaches a terminal, so they are escaped.
    memprof::render::escape_control(&line.replace(['\n', '\r'], " ")).into_owned()
}

fn main() -> ExitCode {
    let cli = match memprof::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // clap's usage error, on one line like every other error (its
            // usage and tip lines joined), with control characters escaped.
            let text = e.render().to_string();
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let line = memprof::render::escape_control(&parts.join("; ")).into_owned();
            let _ = writeln!(io::stderr(), "{line}");
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help, --version: to stdout as clap writes them.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match memprof::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) if err.is::<memprof::check::BudgetExceeded>() => {
            let _ = writeln!(io::stderr(), "memprof: check failed: {err}");
            ExitCode::from(1)
        }
        Err(err) => {
            let message = one_line(&err);
            let _ = writeln!(io::stderr(), "memprof: error: {message}");
            ExitCode::from(2)
        }
    }
}
