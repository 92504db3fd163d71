//! Host streams: one worker thread per stream executing queued jobs in order.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use memhc_backend::{BackendError, BackendOp};

/// A switch every worker checks before each job: while it is closed, no stream makes progress
/// (see [`HostBackend::pause`](super::HostBackend::pause)).
#[derive(Debug, Default)]
pub(super) struct Gate {
    closed: Mutex<u32>,
    opened: Condvar,
}

impl Gate {
    pub(super) fn close(&self) {
        *self.closed.lock().unwrap_or_else(|p| p.into_inner()) += 1;
    }

    pub(super) fn open(&self) {
        let mut closed = self.closed.lock().unwrap_or_else(|p| p.into_inner());
        *closed = closed.saturating_sub(1);
        if *closed == 0 {
            self.opened.notify_all();
        }
    }

    fn pass(&self) {
        let mut closed = self.closed.lock().unwrap_or_else(|p| p.into_inner());
        while *closed > 0 {
            closed = self.opened.wait(closed).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A unit of queued work. It reports failure through its result; a panic inside it is caught
/// and reported the same way.
pub(super) type Job = Box<dyn FnOnce() -> Result<(), BackendError> + Send>;

#[derive(Debug, Default)]
struct Progress {
    submitted: u64,
    completed: u64,
    /// The first asynchronous failure, reported (and kept) by every later synchronisation.
    error: Option<BackendError>,
}

#[derive(Debug, Default)]
pub(super) struct StreamState {
    progress: Mutex<Progress>,
    done: Condvar,
}

impl StreamState {
    fn lock(&self) -> MutexGuard<'_, Progress> {
        // A job never panics while holding this lock (panics are caught before it is taken).
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Blocks until every job submitted before the call has completed; reports the stream's
    /// first asynchronous failure, if any.
    pub(super) fn wait_idle(&self) -> Result<(), BackendError> {
        let mut p = self.lock();
        let target = p.submitted;
        while p.completed < target {
            p = self.done.wait(p).unwrap_or_else(|e| e.into_inner());
        }
        match &p.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// An in-order queue of work executed by its own worker thread.
#[derive(Debug)]
pub struct HostStream {
    /// The stream's number in timelines.
    pub(super) id: u64,
    sender: Option<mpsc::Sender<Job>>,
    pub(super) state: Arc<StreamState>,
    worker: Option<JoinHandle<()>>,
}

impl HostStream {
    pub(super) fn spawn(index: u64, gate: Arc<Gate>) -> Result<Self, BackendError> {
        let (sender, receiver) = mpsc::channel::<Job>();
        let state = Arc::new(StreamState::default());
        let worker_state = Arc::clone(&state);
        let worker = std::thread::Builder::new()
            .name(format!("memhc-host-stream-{index}"))
            .spawn(move || run(receiver, &worker_state, &gate))
            .map_err(|e| BackendError::Driver {
                call: "std::thread::spawn",
                message: e.to_string(),
            })?;
        Ok(HostStream {
            id: index,
            sender: Some(sender),
            state,
            worker: Some(worker),
        })
    }

    /// Appends a job to the queue.
    pub(super) fn submit(&self, job: Job) -> Result<(), BackendError> {
        let sender = self.sender.as_ref().ok_or_else(stopped)?;
        self.state.lock().submitted += 1;
        sender.send(job).map_err(|_| {
            // The worker is gone; undo the count so that waiting does not hang.
            self.state.lock().submitted -= 1;
            stopped()
        })
    }
}

fn stopped() -> BackendError {
    BackendError::Async {
        op: BackendOp::Sync,
        message: "the stream's worker thread has stopped".into(),
    }
}

fn run(receiver: mpsc::Receiver<Job>, state: &StreamState, gate: &Gate) {
    while let Ok(job) = receiver.recv() {
        gate.pass();
        let outcome = catch_unwind(AssertUnwindSafe(job)).unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a queued job panicked".to_owned());
            Err(BackendError::Async {
                op: BackendOp::Sync,
                message,
            })
        });
        let mut p = state.lock();
        p.completed += 1;
        if let Err(e) = outcome {
            p.error.get_or_insert(e);
        }
        drop(p);
        state.done.notify_all();
    }
}

impl Drop for HostStream {
    fn drop(&mut self) {
        // Closing the channel lets the worker finish the queued jobs and exit.
        self.sender.take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}
