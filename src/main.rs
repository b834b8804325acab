//! The `memprof` binary: [`memprof::cli::main`] parses the arguments, runs
//! and maps the outcome to the exit status (0 success, 1 a budget exceeded,
//! 2 error; a closed stdout pipe ends quietly with 0).

use std::process::ExitCode;

// Decoding allocates and frees millions of small vectors and strings;
// mimalloc does that markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // No transparent huge pages, where the kernel would back the heap with
    // them unasked (THP `always`): memprof's allocations are many and small,
    // and 2 MiB pages multiplied its peak memory by two or more without
    // making it faster. The allocator is built not to ask for them (its
    // `no_thp` feature). Failing changes nothing but the memory used.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    ExitCode::from(memprof::cli::main(std::env::args_os()))
}
