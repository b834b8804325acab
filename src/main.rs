//! The `memprof` binary: [`memprof::cli::main`] parses the arguments, runs
//! and maps the outcome to the exit status (0 success, 1 a budget exceeded,
//! 2 error; a closed stdout pipe ends quietly with 0).

use std::process::ExitCode;

// Decoding allocates and frees millions of small vectors and strings;
// mimalloc does that markedly faster than the system allocator (in an arena
// of its own where the decoding threads build entities: `api::Allocator`).
#[global_allocator]
static GLOBAL: memprof::api::Allocator = memprof::api::Allocator;

fn main() -> ExitCode {
    memprof::pages::only_where_asked();
    ExitCode::from(memprof::cli::main(std::env::args_os()))
}
