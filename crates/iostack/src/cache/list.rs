//! Doubly linked lists of cache entries stored in one slab.
//!
//! Most replacement policies keep their entries on one or more recency lists (LRU, SLRU segments,
//! ARC's T1/T2/B1/B2, 2Q's A1in/A1out/Am, ...). [`Slab`] stores the entries of all of a policy's
//! lists in one `Vec`, linked by `u32` indices, with a free list for reuse, so that moving an entry
//! between lists, or to the head of its list, is a few index writes and never allocates.
//! A [`List`] is only a head, a tail and a length; several lists share one slab.
//!
//! Convention: the head is the most recently inserted end (MRU), the tail the oldest (LRU).

/// Index of an entry in a [`Slab`].
pub type Slot = u32;

/// No entry.
pub const NIL: Slot = u32::MAX;

#[derive(Debug, Clone)]
struct Node<T> {
    prev: Slot,
    next: Slot,
    value: T,
}

/// Storage for the entries of a policy's lists.
#[derive(Debug, Clone)]
pub struct Slab<T> {
    nodes: Vec<Node<T>>,
    free: Slot,
    live: usize,
}

/// One list threaded through a [`Slab`]: head (newest), tail (oldest), length.
#[derive(Debug, Clone, Copy)]
pub struct List {
    head: Slot,
    tail: Slot,
    len: usize,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL, len: 0 }
    }
}

impl List {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The newest entry (MRU end).
    #[inline]
    pub fn head(&self) -> Option<Slot> {
        (self.head != NIL).then_some(self.head)
    }
    /// The oldest entry (LRU end).
    #[inline]
    pub fn tail(&self) -> Option<Slot> {
        (self.tail != NIL).then_some(self.tail)
    }
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { nodes: Vec::new(), free: NIL, live: 0 }
    }
}

impl<T> Slab<T> {
    pub fn with_capacity(n: usize) -> Self {
        Slab { nodes: Vec::with_capacity(n), free: NIL, live: 0 }
    }

    /// Number of live entries.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Bytes of memory held per slot (for metadata accounting).
    pub const fn slot_bytes() -> usize {
        std::mem::size_of::<Node<T>>()
    }

    /// Total bytes allocated by the slab.
    pub fn allocated_bytes(&self) -> usize {
        self.nodes.capacity() * Self::slot_bytes()
    }

    /// Stores `value` in a free slot, not yet on any list.
    #[inline]
    pub fn alloc(&mut self, value: T) -> Slot {
        self.live += 1;
        if self.free != NIL {
            let s = self.free;
            let node = &mut self.nodes[s as usize];
            self.free = node.next;
            node.prev = NIL;
            node.next = NIL;
            node.value = value;
            s
        } else {
            let s = self.nodes.len() as Slot;
            assert!(s != NIL, "slab full");
            if self.nodes.len() == self.nodes.capacity() {
                // Grow by an eighth, not by doubling: a cache fills its slab once and keeps it,
                // so doubling's slack (up to half the slab) would stay as metadata for good.
                // Still geometric, so amortized O(1).
                self.nodes.reserve_exact((self.nodes.capacity() / 8).max(64));
            }
            self.nodes.push(Node { prev: NIL, next: NIL, value });
            s
        }
    }

    /// Returns a slot (already unlinked from its list) to the free list.
    #[inline]
    pub fn release(&mut self, s: Slot) {
        self.live -= 1;
        let node = &mut self.nodes[s as usize];
        node.prev = NIL;
        node.next = self.free;
        self.free = s;
    }

    /// Asks the CPU to start loading the node of slot `s` (a hint; no effect on contents).
    #[inline(always)]
    pub fn prefetch(&self, s: Slot) {
        // A slot past the end (`NIL`: nothing to hint) hints the last node instead: a select,
        // where a branch would mispredict as often as hints find nothing.
        let i = (s as usize).min(self.nodes.len().saturating_sub(1));
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is a hint that never faults, whatever the address (here a node of
        // the slab, or the dangling start of an empty one).
        unsafe {
            std::arch::x86_64::_mm_prefetch(self.nodes.as_ptr().wrapping_add(i) as *const i8, std::arch::x86_64::_MM_HINT_T0)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Asks the CPU to start loading the list neighbours of slot `s` (the nodes unlinking it
    /// writes); `s`'s own node should be in the CPU cache already.
    #[inline(always)]
    pub fn prefetch_neighbours(&self, s: Slot) {
        if let Some(node) = self.nodes.get(s as usize) {
            self.prefetch(node.prev);
            self.prefetch(node.next);
        }
    }

    #[inline]
    pub fn get(&self, s: Slot) -> &T {
        &self.nodes[s as usize].value
    }

    #[inline]
    pub fn get_mut(&mut self, s: Slot) -> &mut T {
        &mut self.nodes[s as usize].value
    }

    /// The entry after `s` towards the tail (older).
    #[inline]
    pub fn next(&self, s: Slot) -> Option<Slot> {
        let n = self.nodes[s as usize].next;
        (n != NIL).then_some(n)
    }

    /// The entry before `s` towards the head (newer).
    #[inline]
    pub fn prev(&self, s: Slot) -> Option<Slot> {
        let p = self.nodes[s as usize].prev;
        (p != NIL).then_some(p)
    }

    /// Links an unlinked slot at the head of `list`.
    #[inline]
    pub fn push_head(&mut self, list: &mut List, s: Slot) {
        let old = list.head;
        {
            let n = &mut self.nodes[s as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old != NIL {
            self.nodes[old as usize].prev = s;
        } else {
            list.tail = s;
        }
        list.head = s;
        list.len += 1;
    }

    /// Links an unlinked slot at the tail of `list`.
    #[inline]
    pub fn push_tail(&mut self, list: &mut List, s: Slot) {
        let old = list.tail;
        {
            let n = &mut self.nodes[s as usize];
            n.next = NIL;
            n.prev = old;
        }
        if old != NIL {
            self.nodes[old as usize].next = s;
        } else {
            list.head = s;
        }
        list.tail = s;
        list.len += 1;
    }

    /// Links an unlinked slot `s` just after `at` (towards the tail) in `list`.
    #[inline]
    pub fn insert_after(&mut self, list: &mut List, at: Slot, s: Slot) {
        let next = self.nodes[at as usize].next;
        {
            let n = &mut self.nodes[s as usize];
            n.prev = at;
            n.next = next;
        }
        self.nodes[at as usize].next = s;
        if next != NIL {
            self.nodes[next as usize].prev = s;
        } else {
            list.tail = s;
        }
        list.len += 1;
    }

    /// Unlinks `s` from `list` (it must be on it).
    #[inline]
    pub fn unlink(&mut self, list: &mut List, s: Slot) {
        let (prev, next) = {
            let n = &self.nodes[s as usize];
            (n.prev, n.next)
        };
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            list.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            list.tail = prev;
        }
        let n = &mut self.nodes[s as usize];
        n.prev = NIL;
        n.next = NIL;
        list.len -= 1;
    }

    /// Moves `s`, which is on `list`, to its head.
    #[inline]
    pub fn move_to_head(&mut self, list: &mut List, s: Slot) {
        let old = list.head;
        if old == s {
            return;
        }
        // `s` is on the list and not its head, so it has a predecessor and the head is another
        // entry: relink in place, without `unlink` and `push_head`'s checks for an end.
        let (prev, next) = {
            let n = &self.nodes[s as usize];
            (n.prev, n.next)
        };
        self.nodes[prev as usize].next = next;
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            list.tail = prev;
        }
        {
            let n = &mut self.nodes[s as usize];
            n.prev = NIL;
            n.next = old;
        }
        self.nodes[old as usize].prev = s;
        list.head = s;
    }

    /// Unlinks and returns the tail of `list`.
    #[inline]
    pub fn pop_tail(&mut self, list: &mut List) -> Option<Slot> {
        let t = list.tail;
        if t == NIL {
            return None;
        }
        self.unlink(list, t);
        Some(t)
    }

    /// Iterates `list` from head (newest) to tail (oldest).
    pub fn iter<'a>(&'a self, list: &List) -> impl Iterator<Item = (Slot, &'a T)> + 'a {
        let mut cur = list.head;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let s = cur;
            cur = self.nodes[s as usize].next;
            Some((s, &self.nodes[s as usize].value))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_move_pop() {
        let mut slab = Slab::default();
        let mut l = List::new();
        let a = slab.alloc('a');
        let b = slab.alloc('b');
        let c = slab.alloc('c');
        slab.push_head(&mut l, a);
        slab.push_head(&mut l, b);
        slab.push_head(&mut l, c);
        assert_eq!(slab.iter(&l).map(|(_, v)| *v).collect::<String>(), "cba");
        slab.move_to_head(&mut l, a);
        assert_eq!(slab.iter(&l).map(|(_, v)| *v).collect::<String>(), "acb");
        let t = slab.pop_tail(&mut l).unwrap();
        assert_eq!(*slab.get(t), 'b');
        slab.release(t);
        let d = slab.alloc('d');
        assert_eq!(d, t, "freed slot is reused");
        slab.insert_after(&mut l, a, d);
        assert_eq!(slab.iter(&l).map(|(_, v)| *v).collect::<String>(), "adc");
        assert_eq!(l.len(), 3);
        assert_eq!(slab.live(), 3);
    }
}
