//! Huge pages for the few large buffers memprof fills whole and the few
//! tables that grow with an instance's rows; an arena of its own for the
//! entities the decoding threads build; and the global allocator that
//! gives them.
//!
//! A buffer of tens of MiB written end to end (a large objective's bytes,
//! its terms read on every thread) costs one page fault every 4 KiB: the
//! 2M-term QUBO's 72 MiB took 18,000 faults, most of `advise`'s time.
//! Backed by 2 MiB pages it takes a few dozen. Elsewhere memprof's
//! allocations are small and many, and there 2 MiB pages only multiply the
//! memory held (see [`only_where_asked`]).
//!
//! A huge page is not always the cheaper: where the system hands memory
//! left idle back to a hypervisor (a virtual machine's free page
//! reporting, which reports free blocks of 2 MiB and more), the first
//! touch of a huge page after a pause waits for the host to back it again,
//! while small pages come from memory the guest still holds. On the
//! 2-core VM memprof is measured on, 64 MiB of fresh huge pages took 6 ms
//! run after run but 55–195 ms after a pause of a few seconds; 4 KiB pages
//! 33–47 ms either way. So huge pages go only where they pay in both
//! states.

/// A huge page.
pub const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel to back the whole 2 MiB pages inside `buf`'s allocation
/// with huge pages, before they are first written: call it right after
/// reserving. Where the kernel does not give them on request (THP `never`,
/// another system), `buf` holds no whole huge page, or part of one was
/// written already (memory the allocator gives again), nothing changes.
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
/// there is one.
#[cfg(target_os = "linux")]
fn huge_span(from: usize, len: usize) -> Option<std::ops::Range<usize>> {
    let start = from.checked_next_multiple_of(HUGE_PAGE)?;
    let end = from.checked_add(len)? / HUGE_PAGE * HUGE_PAGE;
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

/// From this size an allocation of [`HugeTables`] gets a mapping of its
/// own, rounded up to whole huge pages: at least half of it is used.
#[cfg(target_os = "linux")]
const TABLE_HUGE_FROM: usize = HUGE_PAGE / 2;

/// The allocator of the few tables that grow with an instance's rows, one
/// entry or more per row (the advice's groups of identical functions and
/// their index, the unused-variables rule's runs): an allocation of 1 MiB
/// or more gets an anonymous mapping of its own, whole 2 MiB pages aligned
/// as such and advised huge, so that its memory is first touched 2 MiB at
/// a time; anything smaller goes to the global allocator.
///
/// Taken 4 KiB at a time, those tables' first touches were a third of the
/// page faults of `advise` on a 200k-row LP, each dearer than the bytes it
/// brought. A table's own mapping starts on untouched pages, which the
/// global allocator's recycled memory may not: the kernel backs a 2 MiB
/// page with a huge one only while none of its 4 KiB pages is in use.
#[derive(Debug, Clone, Copy, Default)]
pub struct HugeTables;

/// A vector in [`HugeTables`].
pub type HugeVec<T> = allocator_api2::vec::Vec<T, HugeTables>;

impl HugeTables {
    /// Whether a block of `layout` has a mapping of its own.
    #[cfg(target_os = "linux")]
    fn maps(layout: std::alloc::Layout) -> bool {
        layout.size() >= TABLE_HUGE_FROM && layout.align() <= HUGE_PAGE
    }
}

// SAFETY: a block stays valid until it is deallocated, whatever becomes of
// the allocator (it holds nothing), and its size alone says which of the
// two ways gave it, so it goes back the way it came.
unsafe impl allocator_api2::alloc::Allocator for HugeTables {
    fn allocate(
        &self,
        layout: std::alloc::Layout,
    ) -> Result<std::ptr::NonNull<[u8]>, allocator_api2::alloc::AllocError> {
        #[cfg(target_os = "linux")]
        if Self::maps(layout) {
            return huge::map(layout.size());
        }
        allocator_api2::alloc::Global.allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: std::ptr::NonNull<u8>, layout: std::alloc::Layout) {
        #[cfg(target_os = "linux")]
        if Self::maps(layout) {
            // SAFETY: `allocate` mapped it (the caller hands back a layout
            // this allocator gave, of the same size class).
            return unsafe { huge::unmap(ptr, layout.size()) };
        }
        // SAFETY: the global allocator gave it, for this layout.
        unsafe { allocator_api2::alloc::Global.deallocate(ptr, layout) }
    }
}

#[cfg(target_os = "linux")]
mod huge {
    use std::ffi::c_void;
    use std::ptr::NonNull;

    use allocator_api2::alloc::AllocError;
    use rustix::mm::{Advice, MapFlags, ProtFlags};

    use super::HUGE_PAGE;

    /// The length of the mapping of an allocation of `size` bytes.
    fn mapped(size: usize) -> Option<usize> {
        size.checked_next_multiple_of(HUGE_PAGE)
    }

    /// Maps `size` bytes, rounded up to whole 2 MiB pages, starting on a
    /// 2 MiB boundary, advised huge.
    pub(super) fn map(size: usize) -> Result<NonNull<[u8]>, AllocError> {
        let len = mapped(size).ok_or(AllocError)?;
        let over = len.checked_add(HUGE_PAGE).ok_or(AllocError)?;
        // SAFETY: a fresh private anonymous mapping, placed by the kernel;
        // it overlaps nothing of ours.
        let base = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                over,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        }
        .map_err(|_| AllocError)?;
        let base = base as usize;
        let start = base.next_multiple_of(HUGE_PAGE);
        // SAFETY: the head before `start` and the tail after `start + len`
        // lie inside the mapping just made, and nothing uses them.
        unsafe {
            if start > base {
                let _ = rustix::mm::munmap(base as *mut c_void, start - base);
            }
            let end = start + len;
            if base + over > end {
                let _ = rustix::mm::munmap(end as *mut c_void, base + over - end);
            }
            // Advice only: without it (THP `never`) the pages are 4 KiB.
            let _ = rustix::mm::madvise(start as *mut c_void, len, Advice::LinuxHugepage);
        }
        let start = NonNull::new(start as *mut u8).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(start, len))
    }

    /// Unmaps what [`map`] mapped for `size` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr` came from [`map`] for a size that rounds up as `size` does.
    pub(super) unsafe fn unmap(ptr: NonNull<u8>, size: usize) {
        if let Some(len) = mapped(size) {
            // SAFETY: the caller's promise: the whole mapping, no longer used.
            let _ = unsafe { rustix::mm::munmap(ptr.as_ptr().cast(), len) };
        }
    }
}

/// The global allocator of memprof's binary and wheel: mimalloc, and on a
/// thread inside [`entities_in_arena`], mimalloc's heap in an arena of its
/// own.
///
/// A decoding thread building entities for an analysis (`report`,
/// `advise`, `top`, `stats`) goes through some 10 MiB of memory as its
/// batches go round, handed from thread to thread and freed on the thread
/// that made them. In an arena of their own they took `report` on the
/// 200k-row LP 0.89 of the time after a pause (as much run after run), and
/// 10–15 MiB less memory at its peak, than in mimalloc's main heap. The arena was once advised huge
/// (a few dozen faults rather than thousands): run after run that was no
/// faster (1.02 and 0.97 of the time without, on the 200k-row and the
/// 198 MB LP), and after a pause, when every huge page is fresh to the
/// host (see the module's note), slower (0.88 and 0.96 without). Counting
/// on the wire (`inspect`) allocates little there, and keeps the heap as
/// it was.
///
/// Blocks are freed by mimalloc wherever they were allocated. A thread
/// that finds the arena full (64 MiB: many threads at once), or the arena
/// not made, allocates as any other from then on; a block of 1 MiB or more
/// that finds no room (a large element's) is given elsewhere alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct Allocator;

// SAFETY: every block comes from mimalloc, in one heap or the other, and
// mimalloc frees and reallocates a block of either; the layouts are
// passed on as given.
unsafe impl std::alloc::GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if let Some(p) = entity_heap::alloc(layout) {
            return p;
        }
        // SAFETY: the caller's layout, as given.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if let Some(p) = entity_heap::zalloc(layout) {
            return p;
        }
        // SAFETY: the caller's layout, as given.
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: a block of mimalloc's, from either heap.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        #[cfg(target_os = "linux")]
        // SAFETY: the caller's block of mimalloc's, from either heap; left
        // as it was when there is no room.
        if let Some(p) = unsafe { entity_heap::realloc(ptr, layout, new_size) } {
            return p;
        }
        // SAFETY: the caller's block and layout, as given.
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }
}

/// Runs `work` with this thread's allocations in the arena's heap of
/// [`Allocator`] (when it is the global allocator; otherwise nothing
/// changes), made on first use.
pub fn entities_in_arena<T>(work: impl FnOnce() -> T) -> T {
    #[cfg(target_os = "linux")]
    {
        let _here = entity_heap::Here::enter();
        work()
    }
    #[cfg(not(target_os = "linux"))]
    work()
}

#[cfg(target_os = "linux")]
mod entity_heap {
    use std::alloc::Layout;
    use std::cell::Cell;
    use std::ffi::c_void;
    use std::sync::OnceLock;

    /// mimalloc's, as its header declares them.
    mod ffi {
        use std::ffi::c_void;
        unsafe extern "C" {
            pub fn mi_reserve_os_memory_ex(
                size: usize,
                commit: bool,
                allow_large: bool,
                exclusive: bool,
                arena_id: *mut *mut c_void,
            ) -> std::ffi::c_int;
            pub fn mi_heap_new_in_arena(arena_id: *mut c_void) -> *mut c_void;
            pub fn mi_heap_theap(heap: *mut c_void) -> *mut c_void;
            pub fn mi_theap_malloc(theap: *mut c_void, size: usize) -> *mut u8;
            pub fn mi_theap_zalloc(theap: *mut c_void, size: usize) -> *mut u8;
            pub fn mi_theap_realloc(theap: *mut c_void, p: *mut u8, size: usize) -> *mut u8;
        }
    }

    /// The alignment every block of mimalloc's has (`MI_MAX_ALIGN_SIZE`); a
    /// layout asking for more allocates as on any other thread.
    const ALIGNED: usize = 16;

    /// The arena's size, reserved (not committed: the memory used is what
    /// is touched), and the most memory the heap holds. Two decoding
    /// threads' batches go round in about 20 MiB of it; the threads that
    /// find it full (many at once) go on as any other.
    const ARENA: usize = 64 << 20;

    thread_local! {
        /// This thread's part of the heap (mimalloc's `theap`), while it
        /// allocates there.
        static THEAP: Cell<*mut c_void> = const { Cell::new(std::ptr::null_mut()) };
    }

    /// The heap, made once: an exclusive arena of mimalloc's.
    fn heap() -> *mut c_void {
        static HEAP: OnceLock<usize> = OnceLock::new();
        let made = *HEAP.get_or_init(|| {
            let mut arena = std::ptr::null_mut();
            // SAFETY: mimalloc reserves the memory and writes the arena's
            // id, which it then makes a heap in.
            unsafe {
                if ffi::mi_reserve_os_memory_ex(ARENA, false, false, true, &mut arena) != 0 {
                    return 0;
                }
                ffi::mi_heap_new_in_arena(arena) as usize
            }
        });
        made as *mut c_void
    }

    /// A block of `size` (for `layout`) made by `make` in this thread's
    /// part of the heap, when the thread is in
    /// [`super::entities_in_arena`] and the heap has room.
    #[inline]
    fn attempt(
        layout: Layout,
        size: usize,
        make: impl FnOnce(*mut c_void) -> *mut u8,
    ) -> Option<*mut u8> {
        if layout.align() > ALIGNED {
            return None;
        }
        // `try_with`: a thread being torn down allocates as any other.
        let theap = THEAP.try_with(Cell::get).ok()?;
        if theap.is_null() {
            return None;
        }
        let p = make(theap);
        if p.is_null() {
            no_room(size);
            return None;
        }
        Some(p)
    }

    /// Blocks this large that find no room are given elsewhere, and the
    /// thread stays: a large element's buffer may not fit where its batches
    /// still do.
    const LARGE: usize = 1 << 20;

    /// The heap had no room for a block of `size`: below [`LARGE`], it is
    /// full, and this thread allocates as any other from now on (until it
    /// leaves and enters again), rather than ask it again for every block.
    #[cold]
    fn no_room(size: usize) {
        if size < LARGE {
            let _ = THEAP.try_with(|t| t.set(std::ptr::null_mut()));
        }
    }

    /// A block of `layout` in the heap (`layout` of nonzero size).
    #[inline]
    pub(super) fn alloc(layout: Layout) -> Option<*mut u8> {
        // SAFETY: this thread's part of a heap of mimalloc's.
        attempt(layout, layout.size(), |t| unsafe {
            ffi::mi_theap_malloc(t, layout.size())
        })
    }

    /// [`alloc`], zeroed.
    #[inline]
    pub(super) fn zalloc(layout: Layout) -> Option<*mut u8> {
        // SAFETY: as in `alloc`.
        attempt(layout, layout.size(), |t| unsafe {
            ffi::mi_theap_zalloc(t, layout.size())
        })
    }

    /// `p`, of `layout`, grown or shrunk to `size` in the heap; `None`
    /// leaves it as it was.
    ///
    /// # Safety
    /// `p` is a block of mimalloc's, of `layout`.
    #[inline]
    pub(super) unsafe fn realloc(p: *mut u8, layout: Layout, size: usize) -> Option<*mut u8> {
        // SAFETY: the caller's block, in this thread's part of the heap.
        attempt(layout, size, |t| unsafe {
            ffi::mi_theap_realloc(t, p, size)
        })
    }

    /// Whether this thread allocates in the heap now (blocks of `layout`).
    #[cfg(test)]
    pub(super) fn here(layout: Layout) -> bool {
        layout.align() <= ALIGNED && !THEAP.with(Cell::get).is_null()
    }

    /// This thread in the heap until dropped.
    pub(super) struct Here {
        was: *mut c_void,
    }

    impl Here {
        pub(super) fn enter() -> Self {
            let heap = heap();
            let theap = match heap.is_null() {
                true => heap,
                // SAFETY: a heap of mimalloc's; its part for this thread,
                // made now, lives as long as the thread.
                false => unsafe { ffi::mi_heap_theap(heap) },
            };
            Self {
                was: THEAP.with(|t| t.replace(theap)),
            }
        }
    }

    impl Drop for Here {
        fn drop(&mut self) {
            THEAP.with(|t| t.set(self.was));
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
        // Holding no whole huge page: nothing.
        assert_eq!(huge_span(64 * MIB + 4096, 2 * MIB), None);
        assert_eq!(huge_span(64 * MIB, 2 * MIB - 1), None);
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

    #[test]
    fn large_tables_get_mappings_of_their_own_and_small_ones_do_not() {
        let mut small: HugeVec<u64> = HugeVec::with_capacity_in(1000, HugeTables);
        small.extend(0..1000);
        let mut large: HugeVec<u64> = HugeVec::with_capacity_in(TABLE_HUGE_FROM / 8, HugeTables);
        assert_eq!(large.as_ptr() as usize % HUGE_PAGE, 0);
        // Grown past its mapping: moved to a larger one, contents kept.
        large.extend(0..3 * MIB as u64 / 8 * 3);
        assert_eq!(large.as_ptr() as usize % HUGE_PAGE, 0);
        assert!(large.iter().enumerate().all(|(i, &x)| x == i as u64));
        assert!(small.iter().enumerate().all(|(i, &x)| x == i as u64));
        // Shrunk below the threshold: back in the global allocator.
        large.truncate(10);
        large.shrink_to_fit();
        assert_eq!(large[..], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let mut index = hashbrown::HashMap::with_hasher_in(Default::default(), HugeTables);
        let _: &hashbrown::HashMap<u64, u64, crate::ids::BuildIdHasher, _> = &index;
        for i in 0..200_000 {
            index.insert(i, i * 3);
        }
        assert!((0..200_000).all(|i| index[&i] == i * 3));
    }

    #[test]
    fn blocks_made_in_the_arena_are_blocks_like_any_other() {
        use std::alloc::{GlobalAlloc, Layout};
        let a = Allocator;
        let small = Layout::from_size_align(24, 8).unwrap();
        let wide = Layout::from_size_align(64, 64).unwrap();
        // A block of the default heap, grown in the arena's heap.
        let before = unsafe { a.alloc(small) };
        unsafe { before.write_bytes(7, 24) };
        assert!(!entity_heap::here(small));
        let (grown, zeroed, aligned) = entities_in_arena(|| unsafe {
            assert!(entity_heap::here(small), "the heap is made");
            assert!(!entity_heap::here(wide), "wider blocks go elsewhere");
            let grown = a.realloc(before, small, 3 * MIB);
            let zeroed = a.alloc_zeroed(Layout::from_size_align(5000, 8).unwrap());
            let aligned = a.alloc(wide);
            (grown as usize, zeroed as usize, aligned as usize)
        });
        assert!(!entity_heap::here(small), "left as it was");
        let (grown, zeroed, aligned) = (grown as *mut u8, zeroed as *mut u8, aligned as *mut u8);
        assert!(!grown.is_null() && !zeroed.is_null() && !aligned.is_null());
        assert_eq!(aligned as usize % 64, 0);
        unsafe {
            assert!(std::slice::from_raw_parts(grown, 24)
                .iter()
                .all(|&b| b == 7));
            assert!(std::slice::from_raw_parts(zeroed, 5000)
                .iter()
                .all(|&b| b == 0));
        }
        // Freed and shrunk on another thread, outside the heap.
        let (grown, zeroed, aligned) = (grown as usize, zeroed as usize, aligned as usize);
        std::thread::spawn(move || unsafe {
            let shrunk = a.realloc(
                grown as *mut u8,
                Layout::from_size_align(3 * MIB, 8).unwrap(),
                24,
            );
            assert!(std::slice::from_raw_parts(shrunk, 24)
                .iter()
                .all(|&b| b == 7));
            a.dealloc(shrunk, small);
            a.dealloc(zeroed as *mut u8, Layout::from_size_align(5000, 8).unwrap());
            a.dealloc(aligned as *mut u8, wide);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_that_finds_the_heap_full_allocates_as_any_other() {
        use std::alloc::{GlobalAlloc, Layout};
        let a = Allocator;
        // Larger than the whole arena: given elsewhere, and the thread
        // stays. Then filled with small blocks: the thread leaves.
        let large = Layout::from_size_align(80 * MIB, 8).unwrap();
        let small = Layout::from_size_align(24, 8).unwrap();
        let block = Layout::from_size_align(64 << 10, 8).unwrap();
        entities_in_arena(|| unsafe {
            assert!(entity_heap::here(small));
            let p = a.alloc(large);
            assert!(!p.is_null());
            p.write_bytes(1, 80 * MIB);
            assert!(entity_heap::here(small), "a large block: stays");
            a.dealloc(p, large);
            let mut blocks = Vec::new();
            while entity_heap::here(small) {
                blocks.push(a.alloc(block));
                assert!(blocks.len() < 2048, "a 64 MiB arena fills");
            }
            assert!(blocks.iter().all(|b| !b.is_null()));
            blocks.into_iter().for_each(|b| a.dealloc(b, block));
        });
        // Entering again asks again.
        entities_in_arena(|| assert!(entity_heap::here(small)));
    }
}
