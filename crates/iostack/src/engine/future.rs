//! Next-use positions, for policies that look into the future (Belady's OPT).
//!
//! One backward pass over the reference stream: walking from the end, the last position seen for
//! each key is the next use of the reference at hand.

use crate::cache::{Key, KeyMap};

/// For each position `i` of `keys`, the position of the next reference to `keys[i]`, or
/// `u64::MAX` when there is none.
pub fn next_use_positions(keys: &[Key]) -> Vec<u64> {
    let mut next = vec![u64::MAX; keys.len()];
    let mut last: KeyMap<u64> = KeyMap::default();
    for (i, &k) in keys.iter().enumerate().rev() {
        if let Some(p) = last.insert(k, i as u64) {
            next[i] = p;
        }
    }
    next
}

#[cfg(test)]
mod tests {
    #[test]
    fn next_uses() {
        let n = super::next_use_positions(&[1, 2, 1, 3, 2, 1]);
        assert_eq!(n, vec![2, 4, 5, u64::MAX, u64::MAX, u64::MAX]);
    }
}
