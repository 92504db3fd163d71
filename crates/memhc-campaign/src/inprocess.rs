//! The in-process transport: the master and the workers are threads of one process, linked by
//! channels. It is what the unit tests run the scheduling protocol on (no MPI needed), what a
//! campaign runs on without MPI, and how rank 0 of an MPI job talks to its own worker thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use crate::error::TransportError;
use crate::message::Message;
use crate::transport::{MasterLink, WorkerLink};

/// The master's end of an in-process campaign.
#[derive(Debug)]
pub struct InProcessMaster {
    to_workers: Vec<Sender<Message>>,
    inbox: Receiver<(usize, Message)>,
    alive: Arc<AtomicBool>,
}

/// A worker's end of an in-process campaign.
#[derive(Debug)]
pub struct InProcessWorker {
    rank: usize,
    to_master: Sender<(usize, Message)>,
    inbox: Receiver<Message>,
    master_alive: Arc<AtomicBool>,
}

/// A master and `workers` workers (ranks `0..workers`), linked.
pub fn links(workers: usize) -> (InProcessMaster, Vec<InProcessWorker>) {
    let (to_master, inbox) = channel();
    let alive = Arc::new(AtomicBool::new(true));
    let mut to_workers = Vec::with_capacity(workers);
    let mut ends = Vec::with_capacity(workers);
    for rank in 0..workers {
        let (tx, rx) = channel();
        to_workers.push(tx);
        ends.push(InProcessWorker {
            rank,
            to_master: to_master.clone(),
            inbox: rx,
            master_alive: alive.clone(),
        });
    }
    let master = InProcessMaster {
        to_workers,
        inbox,
        alive,
    };
    (master, ends)
}

impl InProcessMaster {
    /// The next message if one is waiting, without waiting.
    pub fn try_recv(&mut self) -> Option<(usize, Message)> {
        self.inbox.try_recv().ok()
    }
}

impl Drop for InProcessMaster {
    fn drop(&mut self) {
        self.alive.store(false, Ordering::SeqCst);
    }
}

impl MasterLink for InProcessMaster {
    fn workers(&self) -> usize {
        self.to_workers.len()
    }

    fn send(&mut self, to: usize, message: Message) -> Result<(), TransportError> {
        self.to_workers
            .get(to)
            .ok_or(TransportError::Gone(to))?
            .send(message)
            .map_err(|_| TransportError::Gone(to))
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<(usize, Message)>, TransportError> {
        match self.inbox.recv_timeout(timeout) {
            Ok(m) => Ok(Some(m)),
            // Every worker gone: nothing will come; the caller's deadlines decide what it means.
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                std::thread::sleep(timeout);
                Ok(None)
            }
        }
    }
}

impl WorkerLink for InProcessWorker {
    fn rank(&self) -> usize {
        self.rank
    }

    fn send(&mut self, message: Message) -> Result<(), TransportError> {
        self.to_master
            .send((self.rank, message))
            .map_err(|_| TransportError::Gone(0))
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<Message>, TransportError> {
        match self.inbox.recv_timeout(timeout) {
            Ok(m) => Ok(Some(m)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(TransportError::Gone(0)),
        }
    }

    fn master_alive(&self) -> bool {
        self.master_alive.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_reach_the_other_side_with_their_rank() {
        let (mut m, mut w) = links(2);
        assert_eq!(m.workers(), 2);
        w[1].send(Message::Ready).unwrap();
        assert_eq!(
            m.recv(Duration::from_secs(1)).unwrap(),
            Some((1, Message::Ready))
        );
        m.send(0, Message::Stop).unwrap();
        assert_eq!(
            w[0].recv(Duration::from_secs(1)).unwrap(),
            Some(Message::Stop)
        );
        assert_eq!(w[1].recv(Duration::from_millis(10)).unwrap(), None);
        assert!(m.send(5, Message::Stop).is_err());
        assert!(w[0].master_alive());
        drop(m);
        assert!(!w[0].master_alive());
        assert_eq!(w[0].send(Message::Bye), Err(TransportError::Gone(0)));
    }
}
