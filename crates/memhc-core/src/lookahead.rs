//! The runtime's view of the announced future (`Runtime::set_future`), for prefetch: where the
//! queue stands, what comes in the next few uses, and each object's next use.
//!
//! Built once in linear time: for every position of the sequence, the position of the same
//! object's next use. Each object's next use is a cursor into that table, advanced in O(1) when
//! a launch uses the object (as the Belady policy does), and the queue's position is the
//! furthest use consumed so far, so a run that deviates from the plan only makes the lookahead
//! less useful, never wrong.

use crate::object::ObjectId;
use crate::policy::IdMap;

/// The next use of an object never used again: later than every position.
pub(crate) const NEVER: u64 = u64::MAX;

/// The announced sequence of object uses, and how far the run has come through it.
#[derive(Debug, Default)]
pub(crate) struct Lookahead {
    /// The sequence of object uses.
    future: Vec<ObjectId>,
    /// For every position, the position of the same object's next use ([`NEVER`] if none).
    next_at: Vec<u64>,
    /// Every object's next unconsumed use.
    cursor: IdMap<u64>,
    /// One past the furthest use consumed: the first position still to come.
    pos: usize,
}

impl Lookahead {
    /// Plans `accesses`, forgetting any earlier plan.
    pub(crate) fn set(&mut self, accesses: &[ObjectId]) {
        self.future = accesses.to_vec();
        self.next_at = vec![NEVER; accesses.len()];
        self.cursor.clear();
        self.pos = 0;
        for (pos, &id) in accesses.iter().enumerate().rev() {
            if let Some(later) = self.cursor.insert(id, pos as u64) {
                self.next_at[pos] = later;
            }
        }
    }

    /// The position of `id`'s next use, or [`NEVER`].
    pub(crate) fn next_use(&self, id: ObjectId) -> u64 {
        self.cursor.get(&id).copied().unwrap_or(NEVER)
    }

    /// How many planned uses of `id` are still to come, counted up to `most`.
    pub(crate) fn uses_left(&self, id: ObjectId, most: usize) -> usize {
        let mut at = self.next_use(id);
        let mut n = 0;
        while at != NEVER && n < most {
            n += 1;
            at = usize::try_from(at)
                .ok()
                .and_then(|i| self.next_at.get(i).copied())
                .unwrap_or(NEVER);
        }
        n
    }

    /// A launch used `id`: its next planned use is done.
    pub(crate) fn consume(&mut self, id: ObjectId) {
        if let Some(c) = self.cursor.get_mut(&id)
            && *c != NEVER
        {
            let at = usize::try_from(*c).unwrap_or(usize::MAX);
            *c = self.next_at.get(at).copied().unwrap_or(NEVER);
            self.pos = self.pos.max(at.saturating_add(1));
        }
    }

    /// The uses of the next `window` positions, with their positions.
    pub(crate) fn ahead(&self, window: usize) -> impl Iterator<Item = (u64, ObjectId)> + '_ {
        let start = self.pos.min(self.future.len());
        let end = start.saturating_add(window).min(self.future.len());
        (start..end).map(|p| (p as u64, self.future[p]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(i: u64) -> ObjectId {
        ObjectId::from_index(i)
    }

    #[test]
    fn next_uses_and_the_window_follow_consumption() {
        let mut l = Lookahead::default();
        // a b c | a d b | e a
        l.set(&[id(0), id(1), id(2), id(0), id(3), id(1), id(4), id(0)]);
        assert_eq!(l.next_use(id(0)), 0);
        assert_eq!(l.next_use(id(3)), 4);
        assert_eq!(l.next_use(id(9)), NEVER);
        for i in [0, 1, 2] {
            l.consume(id(i));
        }
        assert_eq!(l.next_use(id(0)), 3);
        assert_eq!(l.next_use(id(2)), NEVER);
        let ahead: Vec<_> = l.ahead(4).collect();
        assert_eq!(ahead, vec![(3, id(0)), (4, id(3)), (5, id(1)), (6, id(4))]);
        // A use out of plan (c again) changes nothing.
        l.consume(id(2));
        assert_eq!(l.ahead(1).next(), Some((3, id(0))));
        for i in [0, 3, 1, 4, 0] {
            l.consume(id(i));
        }
        assert_eq!(l.ahead(3).count(), 0);
        assert_eq!(l.next_use(id(0)), NEVER);
    }
}
