//! Keeping the pool's other workers awake through a solve's many short
//! parallel steps.
//!
//! A turn of a mid-sized level is a handful of parallel steps of a few
//! hundred microseconds each (sweep, transpose, compare), with short serial
//! stretches between them. An idle rayon worker yields a few dozen times and
//! then sleeps; the next step must wake it, and on a virtual machine whose
//! idle vCPUs halt, that wake-up alone takes tens of microseconds
//! (measured on the project's machine: a `join` of two empty closures takes
//! 5 us while the other worker is awake, 21-23 us after 20-100 us of
//! idleness and 86 us after 1 ms). [`Awake`] sends each other worker a
//! *waiter* that looks for work, busy-waiting, instead of sleeping. A
//! worker busy elsewhere runs its waiter only once it next looks for work.
//!
//! A waiter is a job like any other, so a worker may also find it while it
//! waits, inside a job, for another (rayon runs queued jobs there): the
//! waiter then sits on top of that job, which cannot go on until it
//! returns. If that job is one the solve is waiting for, nothing moves
//! while the waiter waits for the solve. So a waiter also leaves once it
//! has found no work for [`IDLE_LIMIT`], and the solve sends new waiters
//! to the workers whose waiters have left, once a turn
//! ([`Awake::rearm`]): such a stall costs at most that long.

use rayon::Yield;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a waiter looks for work in vain before it leaves.
const IDLE_LIMIT: Duration = Duration::from_millis(1);

thread_local! {
    /// Whether this thread runs a waiter (further ones return at once).
    static WAITING: Cell<bool> = const { Cell::new(false) };
}

/// What the waiters of one [`Awake`] share with it.
#[derive(Default)]
struct Shared {
    /// Set when the [`Awake`] is dropped: every waiter leaves.
    done: AtomicBool,
    /// Waiters running.
    live: AtomicUsize,
    /// Waiters started, and a bit per worker index that started one (for
    /// tests).
    started: AtomicUsize,
    workers: AtomicU64,
}

/// The current pool's other workers kept looking for work, busy-waiting,
/// from [`Awake::start`] until the value is dropped (the solve's parallel
/// steps are then taken up at once instead of after a wake-up).
///
/// Outside a pool, or on a pool of one thread, it does nothing: the solve
/// must run on one of the pool's workers (the CLI moves it there).
pub(crate) struct Awake {
    /// The caller's worker index and its pool's thread count; `None` when
    /// there is nothing to do.
    pool: Option<(usize, usize)>,
    shared: Arc<Shared>,
}

impl Awake {
    /// Sends a waiter to each of the current pool's other workers.
    pub(crate) fn start() -> Awake {
        let pool = rayon::current_thread_index()
            .map(|index| (index, rayon::current_num_threads()))
            .filter(|&(_, threads)| threads > 1);
        let awake = Awake {
            pool,
            shared: Arc::default(),
        };
        awake.rearm();
        awake
    }

    /// Sends new waiters if any have left ([`IDLE_LIMIT`] without work, or
    /// not started yet); a worker still running one ignores the new one.
    /// Cheap when all are running: call it once a turn.
    pub(crate) fn rearm(&self) {
        if let Some((_, threads)) = self.pool {
            if self.shared.live.load(Ordering::Acquire) < threads - 1 {
                self.send_waiters();
            }
        }
    }

    /// Broadcasts a waiter to the pool's workers.
    fn send_waiters(&self) {
        let Some((leader, _)) = self.pool else {
            return;
        };
        let shared = Arc::clone(&self.shared);
        // A waiter on every worker, in no scope: nothing waits for them to
        // end, so a worker busy with other work when the solve ends (and
        // that only then finds its waiter, and drops it) holds nothing up.
        rayon::spawn_broadcast(move |context| {
            // The caller's own waiter runs when it next looks for work (in
            // a join of the solve) and must not wait there.
            if context.index() != leader && !WAITING.get() {
                WAITING.set(true);
                shared.live.fetch_add(1, Ordering::AcqRel);
                shared.started.fetch_add(1, Ordering::AcqRel);
                let bit = 1u64.checked_shl(context.index() as u32).unwrap_or(0);
                shared.workers.fetch_or(bit, Ordering::AcqRel);
                wait(&shared.done);
                shared.live.fetch_sub(1, Ordering::AcqRel);
                WAITING.set(false);
            }
        });
    }

    /// Waiters running (for tests).
    #[cfg(test)]
    fn live(&self) -> usize {
        self.shared.live.load(Ordering::Acquire)
    }

    /// Waiters started so far (for tests).
    #[cfg(test)]
    fn started(&self) -> usize {
        self.shared.started.load(Ordering::Acquire)
    }
}

impl Drop for Awake {
    fn drop(&mut self) {
        self.shared.done.store(true, Ordering::Release);
    }
}

/// Takes and runs the pool's jobs until `done`, or until none came for
/// [`IDLE_LIMIT`]; between two looks it calls `sched_yield`. Under Linux's
/// scheduler that lets another runnable thread in but keeps this one
/// runnable, with its share of the core: a waiter costs the book
/// encoder's threads some of theirs.
fn wait(done: &AtomicBool) {
    let mut last_job = Instant::now();
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(Yield::Executed) {
            last_job = Instant::now();
        } else if last_job.elapsed() > IDLE_LIMIT {
            return;
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Waits up to 10 s for `holds()` (waiters start and leave as the
    /// test's threads get a core: the tests run side by side).
    fn eventually(holds: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while !holds() {
            if start.elapsed() > Duration::from_secs(10) {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    #[test]
    fn every_other_worker_runs_a_waiter_until_dropped() {
        for threads in [1, 2, 4] {
            let shared = pool(threads).install(|| {
                let awake = Awake::start();
                let leader = rayon::current_thread_index().unwrap();
                let others = ((1u64 << threads) - 1) & !(1 << leader);
                let workers = || awake.shared.workers.load(Ordering::Acquire);
                assert!(eventually(|| workers() == others), "{threads} threads");
                let sums: Vec<u64> = (1..=200u64)
                    .map(|n| (0..n * 100).into_par_iter().sum())
                    .collect();
                for (n, sum) in (1..=200u64).zip(sums) {
                    assert_eq!(sum, n * 100 * (n * 100 - 1) / 2);
                }
                // This worker found its own waiter in the sums' joins, and
                // left it at once.
                assert_eq!(workers(), others, "{threads} threads");
                Arc::clone(&awake.shared)
            });
            // Dropped: every waiter leaves.
            assert!(eventually(|| shared.live.load(Ordering::Acquire) == 0));
        }
        // Outside any pool: nothing to do.
        let awake = Awake::start();
        awake.rearm();
        assert_eq!(awake.started(), 0);
    }

    #[test]
    fn idle_waiters_leave_and_are_sent_again() {
        pool(2).install(|| {
            let awake = Awake::start();
            assert!(eventually(|| awake.started() == 1));
            // Nothing to take for longer than IDLE_LIMIT.
            assert!(eventually(|| awake.live() == 0));
            awake.rearm();
            assert!(eventually(|| awake.started() == 2));
            // A worker running a waiter runs no second one (it would find
            // it among the jobs it looks for).
            for _ in 0..10 {
                awake.send_waiters();
            }
            let start = Instant::now();
            while start.elapsed() < IDLE_LIMIT / 2 {
                assert!(awake.live() <= 1);
            }
        });
    }

    #[test]
    fn waiters_leave_when_the_solve_panics() {
        let pool = pool(2);
        let shared = pool.install(|| {
            let shared = std::sync::Mutex::new(None);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let awake = Awake::start();
                *shared.lock().unwrap() = Some(Arc::clone(&awake.shared));
                assert!(eventually(|| awake.started() == 1));
                panic!("solver failed");
            }));
            assert!(result.is_err());
            shared.into_inner().unwrap().unwrap()
        });
        assert!(shared.done.load(Ordering::Acquire));
        assert!(eventually(|| shared.live.load(Ordering::Acquire) == 0));
    }

    #[test]
    fn returns_while_another_worker_is_busy_elsewhere() {
        use std::sync::atomic::AtomicU8;
        // 0: not started, 1: busy, 2: released, 3: gave up waiting.
        let state = Arc::new(AtomicU8::new(0));
        let value = pool(2).install(|| {
            let busy = Arc::clone(&state);
            // Occupies the other worker until released (or 10 s pass).
            rayon::spawn(move || {
                busy.store(1, Ordering::Release);
                let start = Instant::now();
                while busy.load(Ordering::Acquire) == 1 {
                    if start.elapsed() > Duration::from_secs(10) {
                        busy.store(3, Ordering::Release);
                    }
                    std::hint::spin_loop();
                }
            });
            while state.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            // Its waiter cannot start until the busy job ends: dropping
            // the Awake must not wait for it.
            let value = {
                let _awake = Awake::start();
                7
            };
            let _ = state.compare_exchange(1, 2, Ordering::AcqRel, Ordering::Acquire);
            value
        });
        assert_eq!(value, 7);
        assert_eq!(
            state.load(Ordering::Acquire),
            2,
            "the Awake waited for the busy worker"
        );
    }

    /// A worker that finds its waiter while it waits, inside a job of the
    /// solve's, for a part of that job taken by the solve's own worker
    /// (rayon runs queued jobs there): the solve waits for the job, the job
    /// for the waiter, and until waiters left when idle, the waiter for the
    /// solve.
    #[test]
    fn a_waiter_found_inside_a_job_of_the_solve_leaves() {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let value = pool(2).install(|| {
                let taken = AtomicBool::new(false);
                let (awake, value) = rayon::join(
                    || {
                        // Once the other worker runs the job below, the
                        // solve starts: its waiter is queued there.
                        while !taken.load(Ordering::Acquire) {
                            std::hint::spin_loop();
                        }
                        Awake::start()
                    },
                    || {
                        taken.store(true, Ordering::Release);
                        // The second part is taken by the solve's worker
                        // (waiting for this job) while the first sleeps;
                        // then this worker waits for it, and finds the waiter.
                        let sleep = |ms| std::thread::sleep(Duration::from_millis(ms));
                        rayon::join(|| sleep(5), || sleep(50));
                        7
                    },
                );
                drop(awake);
                value
            });
            sender.send(value).unwrap();
        });
        assert_eq!(
            receiver.recv_timeout(Duration::from_secs(20)),
            Ok(7),
            "stalled"
        );
    }
}
