//! The second pass of a parallel counting sort: each part writes its items into the slots its
//! counts gave it, all parts at once, into one buffer.

use rayon::prelude::*;

/// Where one part writes: per bucket, its next slot and the end of its slots.
pub struct Scatter<'a, T> {
    out: *mut T,
    next: &'a mut [u32],
    end: &'a [u32],
    /// Items offered past a bucket's slots (dropped: the counts were wrong).
    overflow: usize,
}

impl<T> Scatter<'_, T> {
    /// Writes `item` into bucket `b`'s next slot of this part; dropped and counted if the part
    /// has used all its slots there.
    #[inline(always)]
    pub fn put(&mut self, b: usize, item: T) {
        let at = self.next[b];
        if at >= self.end[b] {
            self.overflow += 1;
            return;
        }
        // SAFETY: `at` is below `end[b]`, inside this part's slots of bucket `b`, which no
        // other part writes ([`scatter`] checked that the parts' slots tile `out`); a slot is
        // written once, as `next[b]` moves past it.
        unsafe { self.out.add(at as usize).write(item) };
        self.next[b] = at + 1;
    }
}

/// A pointer the parts share; each writes only its own slots.
struct Shared<T>(*mut T);
// SAFETY: the parts write disjoint slots ([`Scatter::put`]); nothing reads them meanwhile.
unsafe impl<T> Sync for Shared<T> {}

/// Runs `fill` for every part at once, part `c` writing through a [`Scatter`] whose slots of
/// bucket `b` are `first[c][b]..` up to the next part's first slot there (the last part's:
/// `bucket_end[b]`), the parts' slots tiling `out`, buckets in order and within a bucket parts
/// in order. Returns how many items went past their slots (0 where the counts were right);
/// `first` is left as each part's next slots. Nothing is written where the slots do not tile
/// `out` (Err).
pub fn scatter<T: Send, P: Sync>(
    out: &mut [T],
    parts: &[P],
    first: &mut [Vec<u32>],
    bucket_end: &[u32],
    fill: impl Fn(&P, &mut Scatter<'_, T>) + Sync,
) -> Result<usize, String> {
    let ends = ends(first, bucket_end);
    tiles(first, &ends, out.len())?;
    let shared = Shared(out.as_mut_ptr());
    let overflow = parts
        .par_iter()
        .zip(first.par_iter_mut())
        .zip(ends.par_iter())
        .map(|((part, next), end)| {
            let shared = &shared;
            let mut s = Scatter {
                out: shared.0,
                next,
                end,
                overflow: 0,
            };
            fill(part, &mut s);
            s.overflow
        })
        .sum();
    Ok(overflow)
}

/// Each part's slot ends per bucket: the next part's first slots, the last part's the buckets'
/// ends.
fn ends(first: &[Vec<u32>], bucket_end: &[u32]) -> Vec<Vec<u32>> {
    (0..first.len())
        .map(|c| match first.get(c + 1) {
            Some(next) => next.clone(),
            None => bucket_end.to_vec(),
        })
        .collect()
}

/// Whether the slots `first[c][b]..ends[c][b]` tile `0..len`, bucket after bucket, each
/// bucket's parts in order.
fn tiles(first: &[Vec<u32>], ends: &[Vec<u32>], len: usize) -> Result<(), String> {
    let buckets = first.first().map_or(0, Vec::len);
    let mut at = 0u64;
    for b in 0..buckets {
        for (f, e) in first.iter().zip(ends) {
            if f.len() != buckets || e.len() != buckets || u64::from(f[b]) != at || e[b] < f[b] {
                return Err(format!(
                    "scatter: slots of bucket {b} do not tile the buffer"
                ));
            }
            at = u64::from(e[b]);
        }
    }
    match at == len as u64 {
        true => Ok(()),
        false => Err(format!("scatter: slots end at {at}, the buffer at {len}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two parts, three buckets: every item lands in its bucket, parts in order; an item more
    /// than counted is dropped and counted; slots that do not tile the buffer are refused.
    #[test]
    fn parts_fill_their_own_slots() {
        let items: [&[(usize, u32)]; 2] = [&[(0, 10), (2, 12), (0, 11)], &[(1, 20), (0, 21)]];
        // Bucket 0: part 0 two items, part 1 one; bucket 1: part 1 one; bucket 2: part 0 one.
        let mut first = vec![vec![0, 3, 4], vec![2, 3, 5]];
        let mut out = vec![0u32; 5];
        let fill = |its: &&[(usize, u32)], s: &mut Scatter<'_, u32>| {
            for &(b, v) in its.iter() {
                s.put(b, v);
            }
        };
        assert_eq!(
            scatter(&mut out, &items, &mut first, &[3, 4, 5], fill),
            Ok(0)
        );
        assert_eq!(out, [10, 11, 21, 20, 12]);
        let mut first = vec![vec![0, 3, 4], vec![2, 3, 5]];
        let more: [&[(usize, u32)]; 2] = [&[(1, 7)], &[]];
        assert_eq!(
            scatter(&mut out, &more, &mut first, &[3, 4, 5], fill),
            Ok(1)
        );
        let mut gap = vec![vec![1, 3, 4], vec![2, 3, 5]];
        assert!(scatter(&mut out, &more, &mut gap, &[3, 4, 5], fill).is_err());
    }
}
