//! Huge pages for the few large buffers memprof fills whole, and for
//! nothing else.
//!
//! A buffer of tens of MiB written end to end (a large objective's bytes,
//! its terms read on every thread) costs one page fault every 4 KiB: the
//! 2M-term QUBO's 72 MiB took 18,000 faults, most of `advise`'s time.
//! Backed by 2 MiB pages it takes a few dozen. Everything else memprof
//! allocates is small and many, and there 2 MiB pages only multiply the
//! memory held (see [`only_where_asked`]).

/// Below this a buffer keeps its 4 KiB pages: it would gain little, and an
/// edge page it does not fill would be 2 MiB held for nothing.
#[cfg(target_os = "linux")]
const HUGE_FROM: usize = 8 << 20;

/// Asks the kernel to back the whole 2 MiB pages inside `buf`'s allocation
/// with huge pages, before they are first written: call it right after
/// reserving. Where the kernel does not give them on request (THP `never`,
/// another system), or `buf` is under 8 MiB, nothing changes.
pub fn prefer_huge<T>(buf: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        let len = buf.capacity().saturating_mul(std::mem::size_of::<T>());
        if let Some(span) = huge_span(buf.as_ptr() as usize, len) {
            // SAFETY: the span lies inside `buf`'s own allocation, and the
            // advice changes how its pages are backed, never their contents.
            let _ = unsafe {
                rustix::mm::madvise(
                    span.start as *mut std::ffi::c_void,
                    span.len(),
                    rustix::mm::Advice::LinuxHugepage,
                )
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

/// The whole 2 MiB pages inside `len` bytes from address `from`, where
/// those bytes are at least [`HUGE_FROM`] and hold one.
#[cfg(target_os = "linux")]
fn huge_span(from: usize, len: usize) -> Option<std::ops::Range<usize>> {
    const HUGE: usize = 2 << 20;
    if len < HUGE_FROM {
        return None;
    }
    let start = from.checked_next_multiple_of(HUGE)?;
    let end = from.checked_add(len)? / HUGE * HUGE;
    (end > start).then_some(start..end)
}

/// For the process's start: no transparent huge pages where the kernel
/// would back the heap with them unasked (THP `always`). memprof's
/// allocations are many and small, and 2 MiB pages there multiplied its
/// peak memory by two or more without making it faster (the allocator is
/// built not to ask for them: its `no_thp` feature). The buffers given to
/// [`prefer_huge`] keep them where the kernel allows that (Linux 6.18's
/// `PR_THP_DISABLE_EXCEPT_ADVISED`); an older kernel turns them off for the
/// whole process. Under THP `madvise` or `never` nothing needs turning off.
/// Failing changes nothing but the memory used.
pub fn only_where_asked() {
    #[cfg(target_os = "linux")]
    {
        const EXCEPT_ADVISED: libc::c_ulong = 1 << 1;
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if mode.is_ok_and(|mode| !mode.contains("[always]")) {
            return;
        }
        // SAFETY: PR_SET_THP_DISABLE takes integers and touches no memory.
        let advised = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, EXCEPT_ADVISED, 0, 0) };
        if advised != 0 {
            // SAFETY: as above.
            let _ = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn only_whole_huge_pages_inside_the_buffer_are_advised() {
        // Aligned: all of it.
        assert_eq!(huge_span(64 * MIB, 8 * MIB), Some(64 * MIB..72 * MIB));
        // Unaligned at both ends: the pages wholly inside.
        let from = 64 * MIB + 4096;
        assert_eq!(huge_span(from, 9 * MIB), Some(66 * MIB..72 * MIB));
        // Under the threshold: nothing, however it lies.
        assert_eq!(huge_span(64 * MIB, 8 * MIB - 1), None);
        // At the top of the address space: no overflow.
        assert_eq!(huge_span(usize::MAX - 4 * MIB, 9 * MIB), None);
    }

    #[test]
    fn advising_keeps_the_contents() {
        let mut buf = vec![0u64; 3 * MIB];
        prefer_huge(&buf);
        buf.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64);
        prefer_huge(&buf);
        assert!(buf.iter().enumerate().all(|(i, &x)| x == i as u64));
    }
}
