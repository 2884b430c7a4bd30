//! Arrays read at random, backed by huge pages where the system offers them.
//!
//! A lookup of a cold key in a hash table of tens of MiB misses the data caches, and with 4 KiB
//! pages it misses the TLB as well: before the load (or the prefetch meant to hide it) can even
//! start, the processor walks the page tables, and under virtualisation it walks two sets of
//! them. A transparent huge page maps 2 MiB with one TLB entry, so a table of 48 MiB needs 24
//! entries instead of 12,288. Linux backs a region with huge pages only where it is 2 MiB
//! aligned and, under the common `madvise` policy, advised with `MADV_HUGEPAGE`, which a `Vec`
//! cannot ask for; [`HugePageArray`] allocates its cells that way once they reach
//! [`ADVISE_FROM`] bytes. Elsewhere (other systems, huge pages disabled) the advice is refused
//! or absent and the array is an ordinary one: only speed differs, never contents.
//!
//! Measured on the key tables of the locality probes (`iostack run`, 10M-request Zipf trace,
//! 762K distinct blocks, two CPUs, medians of 5 alternated runs): user CPU 2.77 s instead of
//! 3.17 s, wall time 1.63 s instead of 1.73 s (`docs/performance.md`, "Eighth round").

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The size (and alignment) of a transparent huge page on x86-64 and most 64-bit Arm systems.
const HUGE_PAGE: usize = 2 << 20;
/// Arrays of at least this many bytes are aligned and advised for huge pages (a smaller one
/// would round to at most one huge page and waste most of it).
pub(crate) const ADVISE_FROM: usize = 2 * HUGE_PAGE;

/// A fixed-length array of cells, allocated for random access (see the module comment).
pub(crate) struct HugePageArray<T> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: the array owns its cells as a `Box<[T]>` would.
unsafe impl<T: Send> Send for HugePageArray<T> {}
// SAFETY: shared access only reads the cells.
unsafe impl<T: Sync> Sync for HugePageArray<T> {}

impl<T: Copy> HugePageArray<T> {
    /// `len` cells, each `value`.
    pub(crate) fn filled(len: usize, value: T) -> Self {
        let ptr = Self::allocate(len);
        for i in 0..len {
            // SAFETY: `ptr` holds room for `len` cells.
            unsafe { ptr.as_ptr().add(i).write(value) };
        }
        HugePageArray { ptr, len }
    }
}

/// Cells are `Copy` where the array is made; `Clone` is asked of them here only so that types
/// holding an array can derive `Clone`.
impl<T: Clone> Clone for HugePageArray<T> {
    fn clone(&self) -> Self {
        let ptr = Self::allocate(self.len);
        for (i, x) in self.iter().enumerate() {
            // SAFETY: `ptr` holds room for `len` cells.
            unsafe { ptr.as_ptr().add(i).write(x.clone()) };
        }
        HugePageArray { ptr, len: self.len }
    }
}

impl<T> HugePageArray<T> {
    /// Bytes the cells take.
    pub(crate) fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    fn layout(len: usize) -> Layout {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).expect("array size overflows the address space");
        let align = if bytes >= ADVISE_FROM { HUGE_PAGE } else { std::mem::align_of::<T>() };
        Layout::from_size_align(bytes, align).expect("array size overflows the address space")
    }

    /// Uninitialised room for `len` cells (dangling, never read, when it takes no bytes).
    fn allocate(len: usize) -> NonNull<T> {
        let layout = Self::layout(len);
        if layout.size() == 0 {
            return NonNull::dangling();
        }
        // SAFETY: the layout has a non-zero size.
        let Some(ptr) = NonNull::new(unsafe { alloc(layout) } as *mut T) else { handle_alloc_error(layout) };
        if layout.size() >= ADVISE_FROM {
            advise_huge_pages(ptr.as_ptr() as *mut u8, layout.size());
        }
        ptr
    }
}

/// Asks the kernel to back `bytes` at `start` (2 MiB aligned, not yet touched) with huge pages.
/// A refusal (huge pages disabled, an old kernel) leaves ordinary pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *mut u8, bytes: usize) {
    // SAFETY: the range is one live allocation of ours; the advice changes no contents.
    unsafe { libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *mut u8, _bytes: usize) {}

impl<T> Drop for HugePageArray<T> {
    fn drop(&mut self) {
        // SAFETY: `len` initialised cells, not used again (a no-op for `Copy` cells).
        unsafe { std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len)) };
        let layout = Self::layout(self.len);
        if layout.size() != 0 {
            // SAFETY: allocated by `allocate` with this layout.
            unsafe { dealloc(self.ptr.as_ptr() as *mut u8, layout) };
        }
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
    fn small_and_large_arrays_hold_their_cells() {
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

    #[test]
    fn large_arrays_are_aligned_to_huge_pages() {
        let a = HugePageArray::filled(ADVISE_FROM / 4, 0u32);
        assert_eq!(a.as_ptr() as usize % HUGE_PAGE, 0);
    }
}
