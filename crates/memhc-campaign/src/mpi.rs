//! The MPI transport (feature `mpi`): rsmpi on the system's MPI. Rank 0 is the master and runs
//! a worker of its own on a thread (linked in-process); ranks `1..` are workers. Only the main
//! thread of a process calls MPI (`MPI_THREAD_FUNNELED`); units run on other threads.
//!
//! Nothing blocks without a deadline: receives poll `MPI_Improbe` and sleep between polls
//! (starting at 50 µs, doubling to 5 ms), so that an idle master or a waiting worker takes no
//! CPU from the ranks that compute; the final barrier is `MPI_Ibarrier`, polled the same way.
//! A rank that is lost (a timeout) aborts the job (`MPI_Abort`), which ends every rank: the
//! lost one cannot be asked to stop, and `MPI_Finalize` would wait for it.

use std::time::{Duration, Instant};

use mpi::Threading;
use mpi::environment::Universe;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

use crate::error::{CampaignError, Result, TransportError};
use crate::inprocess::InProcessMaster;
use crate::job::RankContext;
use crate::message::Message;
use crate::transport::{MasterLink, WorkerLink};

/// The tag of every campaign message.
const TAG: mpi::Tag = 16;

/// MPI, initialised: the world communicator and where this rank is.
pub struct MpiWorld {
    world: SimpleCommunicator,
    ctx: RankContext,
    // Dropped last: finalises MPI.
    _universe: Universe,
}

impl MpiWorld {
    /// Initialises MPI (funneled threads) and finds this rank's place on its node
    /// (`MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`).
    pub fn init() -> Result<Self> {
        let (universe, provided) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| CampaignError::Usage("MPI was initialised twice".into()))?;
        if provided < Threading::Funneled {
            return Err(CampaignError::Usage(format!(
                "the MPI library supports threads only at level {provided:?}; \
                 a campaign needs MPI_THREAD_FUNNELED"
            )));
        }
        let world = universe.world();
        let local = world.split_shared(world.rank());
        let ctx = RankContext {
            rank: usize::try_from(world.rank()).unwrap_or(0),
            ranks: usize::try_from(world.size()).unwrap_or(1),
            local_rank: usize::try_from(local.rank()).unwrap_or(0),
            local_ranks: usize::try_from(local.size()).unwrap_or(1),
        };
        drop(local);
        Ok(MpiWorld {
            world,
            ctx,
            _universe: universe,
        })
    }

    /// Where this rank is.
    pub fn context(&self) -> RankContext {
        self.ctx
    }

    /// The master's link: ranks `1..` over MPI, rank 0 through `local` (its own worker).
    pub fn master_link(&self, local: InProcessMaster) -> MpiMaster<'_> {
        MpiMaster {
            world: &self.world,
            local,
        }
    }

    /// A worker's link to rank 0.
    pub fn worker_link(&self) -> MpiWorker<'_> {
        MpiWorker {
            world: &self.world,
            rank: self.ctx.rank,
        }
    }

    /// Waits, without spinning, until every rank is here (`MPI_Ibarrier`), at most `timeout`;
    /// then MPI is finalised when `self` is dropped. Past the timeout the job is aborted.
    pub fn barrier(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut request = self.world.immediate_barrier();
        let mut pause = Backoff::new();
        loop {
            match request.test() {
                Ok(_) => return,
                Err(r) => request = r,
            }
            if Instant::now() >= deadline {
                eprintln!(
                    "rank {}: the other ranks did not finish within {:.1} s: aborting",
                    self.ctx.rank,
                    timeout.as_secs_f64()
                );
                self.abort(1);
            }
            pause.sleep();
        }
    }

    /// Ends every rank of the job with `code` (`MPI_Abort`).
    pub fn abort(&self, code: u8) -> ! {
        self.world.abort(i32::from(code))
    }
}

/// Sleeps between polls: 50 µs, doubling up to 5 ms.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Backoff(Duration::from_micros(50))
    }

    fn sleep(&mut self) {
        std::thread::sleep(self.0);
        self.0 = (self.0 * 2).min(Duration::from_millis(5));
    }
}

/// The master's link over MPI (rank 0's own worker in-process).
pub struct MpiMaster<'a> {
    world: &'a SimpleCommunicator,
    local: InProcessMaster,
}

impl MasterLink for MpiMaster<'_> {
    fn workers(&self) -> usize {
        usize::try_from(self.world.size()).unwrap_or(1)
    }

    fn send(&mut self, to: usize, message: Message) -> Result<(), TransportError> {
        if to == 0 {
            return self.local.send(0, message);
        }
        let rank = i32::try_from(to).map_err(|_| TransportError::Gone(to))?;
        self.world
            .process_at_rank(rank)
            .send_with_tag(&message.encode()[..], TAG);
        Ok(())
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<(usize, Message)>, TransportError> {
        let deadline = Instant::now() + timeout;
        let mut pause = Backoff::new();
        loop {
            if let Some(m) = self.local.try_recv() {
                return Ok(Some(m));
            }
            if let Some(probed) = self
                .world
                .any_process()
                .immediate_matched_probe_with_tag(TAG)
            {
                let (bytes, status) = probed.matched_receive_vec::<u8>();
                let rank = usize::try_from(status.source_rank()).unwrap_or(0);
                return Message::decode(&bytes, rank).map(|m| Some((rank, m)));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            pause.sleep();
        }
    }
}

/// A worker's link to rank 0 over MPI.
pub struct MpiWorker<'a> {
    world: &'a SimpleCommunicator,
    rank: usize,
}

impl WorkerLink for MpiWorker<'_> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn send(&mut self, message: Message) -> Result<(), TransportError> {
        self.world
            .process_at_rank(0)
            .send_with_tag(&message.encode()[..], TAG);
        Ok(())
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<Message>, TransportError> {
        let deadline = Instant::now() + timeout;
        let mut pause = Backoff::new();
        let master = self.world.process_at_rank(0);
        loop {
            if let Some(probed) = master.immediate_matched_probe_with_tag(TAG) {
                let (bytes, _) = probed.matched_receive_vec::<u8>();
                return Message::decode(&bytes, 0).map(Some);
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            pause.sleep();
        }
    }
}
