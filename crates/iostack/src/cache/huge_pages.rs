//! Arrays read at random, backed by huge pages where the system offers them.
//!
//! A lookup of a cold key in a hash table of tens of MiB misses the data caches, and with 4 KiB
//! pages it misses the TLB as well: before the load (or the prefetch meant to hide it) can even
//! start, the processor walks the page tables, and under virtualisation it walks two sets of
//! them. A transparent huge page maps 2 MiB with one TLB entry, so a table of 48 MiB needs 24
//! entries instead of 12,288. Linux backs a region with huge pages only where it is 2 MiB
//! aligned and, under the common `madvise` policy, advised with `MADV_HUGEPAGE`. A `Vec` can ask
//! for neither, and when it grows, `realloc` moves a large one with `mremap` to an address of
//! any alignment, which splits huge pages back into small ones.
//!
//! So a [`HugePageArray`] of [`ADVISE_FROM`] bytes or more is a mapping of its own: 2 MiB
//! aligned, advised, and grown with `mremap` too, but in place when the addresses after it are
//! free and otherwise to another 2 MiB-aligned address, so that its pages keep their size and
//! are moved, not copied; only the new part is touched for the first time. (Growing into a
//! fresh array instead zeroed every size again: on a table of 512 MiB, the system time went from
//! 0.8 s to 1.4-2.7 s.) Smaller arrays, and all of them off Linux, come from the allocator. Where
//! the advice is refused (huge pages disabled) the pages are small: only speed differs, never
//! contents.
//!
//! Measured on the key tables of the locality probes (`iostack run`, 10M-request Zipf trace,
//! 762K distinct blocks, two CPUs): `docs/performance.md`, "Eighth round".

use std::alloc::{alloc, dealloc, handle_alloc_error, realloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The size (and alignment) of a transparent huge page on x86-64 and most 64-bit Arm systems.
const HUGE_PAGE: usize = 2 << 20;
/// Arrays of at least this many bytes are mapped for huge pages on Linux (a smaller one would
/// round to one huge page and waste most of it).
const ADVISE_FROM: usize = 2 * HUGE_PAGE;

/// A growable array of cells, allocated for random access (see the module comment).
pub(crate) struct HugePageArray<T> {
    ptr: NonNull<T>,
    len: usize,
    /// Bytes of the array's own mapping; 0 when the allocator holds it.
    mapped: usize,
}

// SAFETY: the array owns its cells as a `Box<[T]>` would.
unsafe impl<T: Send> Send for HugePageArray<T> {}
// SAFETY: shared access only reads the cells.
unsafe impl<T: Sync> Sync for HugePageArray<T> {}

impl<T: Copy> HugePageArray<T> {
    /// `len` cells, each `value`.
    pub(crate) fn filled(len: usize, value: T) -> Self {
        let (ptr, mapped) = room(len);
        let mut a = HugePageArray { ptr, len: 0, mapped };
        a.fill_to(len, value);
        a
    }

    /// Grows the array to `len` cells, the new ones `value`, keeping the others (and, where it
    /// is mapped, moving its pages rather than copying them).
    pub(crate) fn grow(&mut self, len: usize, value: T) {
        assert!(len >= self.len, "an array only grows");
        let bytes = bytes_of::<T>(len);
        if self.mapped != 0 {
            self.ptr = remap(self.ptr, self.mapped, round_to_huge(bytes));
            self.mapped = round_to_huge(bytes);
        } else if bytes >= ADVISE_FROM && cfg!(target_os = "linux") {
            // From the allocator to a mapping of its own.
            let (ptr, mapped) = room::<T>(len);
            // SAFETY: distinct allocations; the old one holds `self.len` cells.
            unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), ptr.as_ptr(), self.len) };
            free(self.ptr, self.len, self.mapped);
            (self.ptr, self.mapped) = (ptr, mapped);
        } else if self.len == 0 {
            self.ptr = room::<T>(len).0;
        } else if bytes > 0 {
            // SAFETY: allocated with the small layout of `self.len` cells; the new size is not 0.
            let p = unsafe { realloc(self.ptr.as_ptr() as *mut u8, small_layout::<T>(self.len), bytes) };
            self.ptr = NonNull::new(p as *mut T).unwrap_or_else(|| handle_alloc_error(small_layout::<T>(len)));
        }
        self.fill_to(len, value);
    }

    fn fill_to(&mut self, len: usize, value: T) {
        for i in self.len..len {
            // SAFETY: the array has room for `len` cells.
            unsafe { self.ptr.as_ptr().add(i).write(value) };
        }
        self.len = len;
    }
}

impl<T> HugePageArray<T> {
    /// Bytes the cells take.
    pub(crate) fn bytes(&self) -> usize {
        bytes_of::<T>(self.len)
    }
}

fn bytes_of<T>(len: usize) -> usize {
    len.checked_mul(std::mem::size_of::<T>()).expect("array size overflows the address space")
}

fn round_to_huge(bytes: usize) -> usize {
    bytes.next_multiple_of(HUGE_PAGE)
}

/// The allocator's layout of `len` cells.
fn small_layout<T>(len: usize) -> Layout {
    Layout::array::<T>(len).expect("array size overflows the address space")
}

/// Uninitialised room for `len` cells, and the bytes mapped for it (0: from the allocator).
fn room<T>(len: usize) -> (NonNull<T>, usize) {
    let bytes = bytes_of::<T>(len);
    if bytes >= ADVISE_FROM && cfg!(target_os = "linux") {
        let mapped = round_to_huge(bytes);
        return (map(mapped).cast(), mapped);
    }
    if bytes == 0 {
        return (NonNull::dangling(), 0);
    }
    let layout = small_layout::<T>(len);
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { alloc(layout) } as *mut T;
    (NonNull::new(p).unwrap_or_else(|| handle_alloc_error(layout)), 0)
}

fn free<T>(ptr: NonNull<T>, len: usize, mapped: usize) {
    if mapped != 0 {
        unmap(ptr.cast(), mapped);
    } else if bytes_of::<T>(len) != 0 {
        // SAFETY: allocated with this layout.
        unsafe { dealloc(ptr.as_ptr() as *mut u8, small_layout::<T>(len)) };
    }
}

#[cfg(target_os = "linux")]
mod mapping {
    use super::HUGE_PAGE;
    use std::ptr::NonNull;

    /// Aborts as the allocator does when memory runs out.
    fn out_of_memory(bytes: usize) -> ! {
        std::alloc::handle_alloc_error(std::alloc::Layout::from_size_align(bytes, HUGE_PAGE).unwrap_or(std::alloc::Layout::new::<u8>()))
    }

    /// A fresh zeroed mapping of `bytes` (a multiple of 2 MiB) at a 2 MiB-aligned address,
    /// advised for huge pages.
    pub(super) fn map(bytes: usize) -> NonNull<u8> {
        let span = bytes + HUGE_PAGE;
        // SAFETY: a new private anonymous mapping; nothing else is touched.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), span, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        if p == libc::MAP_FAILED {
            out_of_memory(bytes);
        }
        let start = p as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        // SAFETY: the head and the tail are parts of the mapping just made, outside the array.
        unsafe {
            if aligned > start {
                libc::munmap(start as *mut libc::c_void, aligned - start);
            }
            if start + span > aligned + bytes {
                libc::munmap((aligned + bytes) as *mut libc::c_void, start + span - aligned - bytes);
            }
        }
        advise(aligned, bytes);
        NonNull::new(aligned as *mut u8).expect("a mapping is never at address 0")
    }

    /// Grows the mapping at `ptr` from `old` to `new` bytes (multiples of 2 MiB), keeping its
    /// contents: in place if it can, else moved to a fresh 2 MiB-aligned address.
    pub(super) fn remap<T>(ptr: NonNull<T>, old: usize, new: usize) -> NonNull<T> {
        if new == old {
            return ptr;
        }
        let at = ptr.as_ptr() as *mut libc::c_void;
        // SAFETY: `ptr` is a mapping of `old` bytes that only this array uses.
        let p = unsafe { libc::mremap(at, old, new, 0) };
        if p != libc::MAP_FAILED {
            advise(at as usize, new);
            return ptr;
        }
        let target = map(new);
        // SAFETY: moves the array's pages onto `target`, a mapping of `new` bytes made for it,
        // which the move replaces; both are 2 MiB aligned, so huge pages move whole.
        let p = unsafe { libc::mremap(at, old, new, libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED, target.as_ptr() as *mut libc::c_void) };
        if p == libc::MAP_FAILED {
            unmap(target, new);
            out_of_memory(new);
        }
        advise(target.as_ptr() as usize, new);
        target.cast()
    }

    pub(super) fn unmap(ptr: NonNull<u8>, bytes: usize) {
        // SAFETY: a mapping of `bytes` made by `map` or `remap`, used by nothing else.
        unsafe { libc::munmap(ptr.as_ptr() as *mut libc::c_void, bytes) };
    }

    /// Asks for huge pages on `bytes` at `start`; a refusal (huge pages disabled, an old
    /// kernel) leaves small pages.
    fn advise(start: usize, bytes: usize) {
        // SAFETY: the range is a mapping of ours; the advice changes no contents.
        unsafe { libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
mod mapping {
    use std::ptr::NonNull;
    // Never called: arrays are mapped on Linux only.
    pub(super) fn map(_bytes: usize) -> NonNull<u8> {
        unreachable!("huge-page mappings are made on Linux only")
    }
    pub(super) fn remap<T>(_ptr: NonNull<T>, _old: usize, _new: usize) -> NonNull<T> {
        unreachable!("huge-page mappings are made on Linux only")
    }
    pub(super) fn unmap(_ptr: NonNull<u8>, _bytes: usize) {
        unreachable!("huge-page mappings are made on Linux only")
    }
}

use mapping::{map, remap, unmap};

impl<T> Drop for HugePageArray<T> {
    fn drop(&mut self) {
        // SAFETY: `len` initialised cells, not used again (a no-op for `Copy` cells).
        unsafe { std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len)) };
        free(self.ptr, self.len, self.mapped);
    }
}

/// Cells are `Copy` where the array is made; `Clone` is asked of them here only so that types
/// holding an array can derive `Clone`.
impl<T: Clone> Clone for HugePageArray<T> {
    fn clone(&self) -> Self {
        let (ptr, mapped) = room::<T>(self.len);
        for (i, x) in self.iter().enumerate() {
            // SAFETY: `ptr` holds room for `len` cells.
            unsafe { ptr.as_ptr().add(i).write(x.clone()) };
        }
        HugePageArray { ptr, len: self.len, mapped }
    }
}

impl<T> Deref for HugePageArray<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised cells (or a dangling pointer and no cell).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for HugePageArray<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_hold_their_cells_through_clones() {
        for len in [0usize, 1, 1000, ADVISE_FROM / 8 + 3] {
            let mut a = HugePageArray::filled(len, u64::MAX);
            assert_eq!(a.len(), len);
            assert!(a.iter().all(|&x| x == u64::MAX));
            for (i, x) in a.iter_mut().enumerate() {
                *x = i as u64;
            }
            let b = a.clone();
            a[0..len.min(1)].fill(7);
            assert!(b.iter().enumerate().all(|(i, &x)| x == i as u64));
            assert_eq!(b.bytes(), len * 8);
        }
    }

    /// Growth from nothing, through the allocator, across the mapping threshold and on as a
    /// mapping, keeps every cell and fills the new ones.
    #[test]
    fn growth_keeps_the_cells() {
        let mut a = HugePageArray::filled(0, 0u64);
        let mut len = 0usize;
        for step in 0..9 {
            let new = if len == 0 { 100 } else { len * 4 };
            a.grow(new, u64::MAX - step);
            assert!(a[len..].iter().all(|&x| x == u64::MAX - step));
            for i in len..new {
                a[i] = i as u64 * 3;
            }
            len = new;
            assert!(a.iter().enumerate().all(|(i, &x)| x == i as u64 * 3), "after growing to {len}");
        }
        // The last two growths were of a mapping (100 * 4^7 cells of 8 bytes are past 4 MiB).
        assert!(a.mapped > ADVISE_FROM || !cfg!(target_os = "linux"));
    }

    /// A mapping that cannot grow in place (another mapping right after it) moves to a fresh
    /// 2 MiB-aligned address with its cells.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_mapping_blocked_in_place_moves_with_its_cells() {
        let len = ADVISE_FROM / 8;
        let mut a = HugePageArray::filled(len, 0u64);
        for (i, x) in a.iter_mut().enumerate() {
            *x = i as u64;
        }
        assert_eq!(a.mapped, ADVISE_FROM);
        assert_eq!(a.as_ptr() as usize % HUGE_PAGE, 0);
        let after = (a.as_ptr() as usize + a.mapped) as *mut libc::c_void;
        // SAFETY: a new mapping at a free address (NOREPLACE fails rather than replace one).
        let blocker = unsafe { libc::mmap(after, 4096, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE, -1, 0) };
        assert_eq!(blocker, after, "the address after the array was taken: the test cannot place its blocker");
        let before = a.as_ptr();
        a.grow(2 * len, 7);
        assert_ne!(a.as_ptr(), before, "the growth could not be in place");
        assert_eq!(a.as_ptr() as usize % HUGE_PAGE, 0);
        assert!(a[..len].iter().enumerate().all(|(i, &x)| x == i as u64));
        assert!(a[len..].iter().all(|&x| x == 7));
        // SAFETY: the blocker mapped above, used by nothing else.
        unsafe { libc::munmap(blocker, 4096) };
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_arrays_are_aligned_to_huge_pages() {
        let a = HugePageArray::filled(ADVISE_FROM / 4, 0u32);
        assert_eq!(a.as_ptr() as usize % HUGE_PAGE, 0);
        let mut b = HugePageArray::filled(10, 0u32);
        b.grow(ADVISE_FROM, 1);
        assert_eq!(b.as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(a.clone().as_ptr() as usize % HUGE_PAGE, 0);
    }
}
