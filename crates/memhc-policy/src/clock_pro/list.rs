//! The clock itself: a circular doubly linked list of pages in a slab, the list head just
//! behind HAND_hot, and the moves of the three hands. What the hands do at each page is the
//! policy's, in the parent module.

use super::{ClockPro, Node, Status};
use crate::ObjectId;

impl ClockPro {
    pub(super) fn next_of(&self, i: usize) -> usize {
        self.nodes.get(i).map_or(i, |n| n.next)
    }

    pub(super) fn prev_of(&self, i: usize) -> usize {
        self.nodes.get(i).map_or(i, |n| n.prev)
    }

    pub(super) fn set_next(&mut self, i: usize, next: usize) {
        if let Some(n) = self.nodes.get_mut(i) {
            n.next = next;
        }
    }

    pub(super) fn set_prev(&mut self, i: usize, prev: usize) {
        if let Some(n) = self.nodes.get_mut(i) {
            n.prev = prev;
        }
    }

    pub(super) fn status_of(&self, i: usize) -> Option<Status> {
        self.nodes.get(i).map(|n| n.status)
    }

    /// A detached slot for a new resident cold page in its test period.
    pub(super) fn alloc(&mut self, id: ObjectId) -> usize {
        let node = Node {
            id,
            status: Status::Cold,
            referenced: false,
            in_test: true,
            prev: 0,
            next: 0,
        };
        while let Some(i) = self.free.pop() {
            if let Some(slot) = self.nodes.get_mut(i) {
                *slot = Node {
                    prev: i,
                    next: i,
                    ..node
                };
                return i;
            }
        }
        let i = self.nodes.len();
        self.nodes.push(Node {
            prev: i,
            next: i,
            ..node
        });
        i
    }

    /// Links the detached node `i` in at the list head, just behind HAND_hot.
    pub(super) fn attach_at_head(&mut self, i: usize) {
        match self.hand_hot {
            Some(h) => {
                let p = self.prev_of(h);
                self.set_next(p, i);
                self.set_prev(i, p);
                self.set_next(i, h);
                self.set_prev(h, i);
            }
            None => {
                self.set_next(i, i);
                self.set_prev(i, i);
                self.hand_hot = Some(i);
                self.hand_cold = Some(i);
                self.hand_test = Some(i);
            }
        }
    }

    /// Unlinks `i`; every hand on it moves on to its successor.
    pub(super) fn detach(&mut self, i: usize) {
        let next = self.next_of(i);
        let prev = self.prev_of(i);
        let successor = (next != i).then_some(next);
        for hand in [&mut self.hand_hot, &mut self.hand_cold, &mut self.hand_test] {
            if *hand == Some(i) {
                *hand = successor;
            }
        }
        self.set_next(prev, next);
        self.set_prev(next, prev);
        self.set_next(i, i);
        self.set_prev(i, i);
    }

    pub(super) fn move_to_head(&mut self, i: usize) {
        self.detach(i);
        self.attach_at_head(i);
    }

    /// Takes `i` off the list and forgets its object.
    pub(super) fn remove_node(&mut self, i: usize) {
        let Some(node) = self.nodes.get(i).copied() else {
            return;
        };
        self.detach(i);
        match node.status {
            Status::Hot => self.hot = self.hot.saturating_sub(1),
            Status::Cold => self.cold = self.cold.saturating_sub(1),
            Status::NonResident => self.non_resident = self.non_resident.saturating_sub(1),
        }
        self.index.remove(&node.id);
        self.free.push(i);
    }

    pub(super) fn advance_cold(&mut self) {
        if let Some(c) = self.hand_cold {
            self.hand_cold = Some(self.next_of(c));
        }
    }

    pub(super) fn advance_test(&mut self) {
        if let Some(t) = self.hand_test {
            self.hand_test = Some(self.next_of(t));
        }
    }

    /// Moves HAND_hot one page on, carrying along a hand that stood on the page it leaves: that
    /// page is now at the list head, which no hand may lag behind.
    pub(super) fn advance_hot(&mut self) {
        if let Some(h) = self.hand_hot {
            let next = self.next_of(h);
            for hand in [&mut self.hand_cold, &mut self.hand_test] {
                if *hand == Some(h) {
                    *hand = Some(next);
                }
            }
            self.hand_hot = Some(next);
        }
    }

    // ---- CLOCK-Pro ---------------------------------------------------------------------------
}
