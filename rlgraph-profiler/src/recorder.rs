//! Recording: RAII scopes that close into events, a per-process profiler, and the switch
//! that makes every scope free when profiling is off.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::clock::Clock;
use crate::event::{Category, Event, Kind, Name};

/// How much the profiler records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Nothing: every scope is a no-op after one atomic load.
    Off = 0,
    /// Phases and operations only (what calibration compares against "off").
    Annotations = 1,
    /// Annotations and captured backend, transfer and simulator work.
    Full = 2,
}

impl Level {
    fn from_u8(v: u8) -> Level {
        match v {
            0 => Level::Off,
            1 => Level::Annotations,
            _ => Level::Full,
        }
    }
}

/// A profiler: a level, a clock and the events recorded so far, from any thread.
#[derive(Debug)]
pub struct Profiler {
    level: AtomicU8,
    clock: Clock,
    events: Mutex<Vec<Event>>,
}

static NEXT_THREAD: AtomicU32 = AtomicU32::new(0);

thread_local! {
    static THREAD: Cell<Option<u32>> = const { Cell::new(None) };
}

/// This thread's number, assigned on first use.
fn thread_number() -> u32 {
    THREAD.with(|t| match t.get() {
        Some(n) => n,
        None => {
            let n = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
            t.set(Some(n));
            n
        }
    })
}

/// An open scope; it records its event when dropped.
#[must_use = "a scope measures until it is dropped"]
pub struct Scope<'p> {
    open: Option<Open<'p>>,
}

struct Open<'p> {
    profiler: &'p Profiler,
    kind: Kind,
    name: Name,
    detail: Option<Name>,
    method: Option<Name>,
    start: u64,
}

impl Scope<'_> {
    /// A scope that records nothing.
    pub const fn off() -> Scope<'static> {
        Scope { open: None }
    }
}

impl Drop for Scope<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(o) = self.open.take() {
            o.close();
        }
    }
}

impl Open<'_> {
    // Out of line, so that a scope that records nothing is a load, a branch and no call.
    #[inline(never)]
    fn close(self) {
        let o = self;
        {
            let end = o.profiler.clock.now();
            o.profiler.push(Event {
                kind: o.kind,
                name: o.name,
                detail: o.detail,
                method: o.method,
                thread: thread_number(),
                start: o.start,
                end,
            });
            o.profiler.clock.charge_event();
        }
    }
}

impl Profiler {
    /// A profiler on `clock`, recording at `level`.
    pub fn new(clock: Clock, level: Level) -> Profiler {
        Profiler {
            level: AtomicU8::new(level as u8),
            clock,
            events: Mutex::new(Vec::new()),
        }
    }

    /// How much it records now.
    pub fn level(&self) -> Level {
        Level::from_u8(self.level.load(Ordering::Relaxed))
    }

    /// Changes how much it records from now on.
    pub fn set_level(&self, level: Level) {
        self.level.store(level as u8, Ordering::Relaxed);
    }

    /// Its clock (a test advances a virtual one).
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    fn push(&self, event: Event) {
        // A poisoned lock only means another thread panicked mid-push; the list is intact.
        self.events.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }

    /// Opens a scope of `kind` if the level records it.
    pub fn open(&self, kind: Kind, name: Name, detail: Option<Name>, method: Option<Name>) -> Scope<'_> {
        let needed = match kind {
            Kind::Phase | Kind::Operation => Level::Annotations,
            Kind::Capture(_) => Level::Full,
        };
        if self.level() < needed {
            return Scope::off();
        }
        Scope {
            open: Some(Open {
                profiler: self,
                kind,
                name,
                detail,
                method,
                start: self.clock.now(),
            }),
        }
    }

    /// A phase of the algorithm (`data_collection`, `training`).
    pub fn phase(&self, name: &'static str) -> Scope<'_> {
        self.open(Kind::Phase, Name::Static(name), None, None)
    }

    /// An operation inside a phase (`inference`, `backpropagation`, `simulation`).
    pub fn operation(&self, name: &'static str) -> Scope<'_> {
        self.open(Kind::Operation, Name::Static(name), None, None)
    }

    /// Captured work of `category`.
    pub fn capture(&self, category: Category, name: impl Into<Name>) -> Scope<'_> {
        self.open(Kind::Capture(category), name.into(), None, None)
    }

    /// Takes every event recorded so far, ordered by thread and start.
    pub fn take_events(&self) -> Vec<Event> {
        let mut events = std::mem::take(&mut *self.events.lock().unwrap_or_else(|e| e.into_inner()));
        events.sort_by_key(|e| (e.thread, e.start, std::cmp::Reverse(e.end)));
        events
    }
}

/// The process's level, kept apart from the profiler so that a scope costs one load when off.
static GLOBAL_LEVEL: AtomicU8 = AtomicU8::new(Level::Off as u8);
static GLOBAL: OnceLock<Profiler> = OnceLock::new();

/// The process's profiler, on the machine's clock, which the library's own scopes use.
pub fn global() -> &'static Profiler {
    GLOBAL.get_or_init(|| Profiler::new(Clock::real(), Level::from_u8(GLOBAL_LEVEL.load(Ordering::Relaxed))))
}

/// Sets how much the process's profiler records.
pub fn set_level(level: Level) {
    GLOBAL_LEVEL.store(level as u8, Ordering::Relaxed);
    global().set_level(level);
}

/// Whether the process's profiler records at least `level`.
#[inline]
pub fn enabled(level: Level) -> bool {
    GLOBAL_LEVEL.load(Ordering::Relaxed) >= level as u8
}

/// Opens a scope on the process's profiler; out of line, as [`Open::close`] is.
#[inline(never)]
fn open_global(kind: Kind, name: Name, detail: Option<Name>, method: Option<Name>) -> Scope<'static> {
    global().open(kind, name, detail, method)
}

/// A phase scope on the process's profiler (`let _p = phase("training");`).
#[inline]
pub fn phase(name: &'static str) -> Scope<'static> {
    if !enabled(Level::Annotations) {
        return Scope::off();
    }
    open_global(Kind::Phase, Name::Static(name), None, None)
}

/// An operation scope on the process's profiler (`let _o = operation("inference");`).
#[inline]
pub fn operation(name: &'static str) -> Scope<'static> {
    if !enabled(Level::Annotations) {
        return Scope::off();
    }
    open_global(Kind::Operation, Name::Static(name), None, None)
}

/// A capture scope on the process's profiler, for the library's own hooks.
#[inline]
pub fn capture(category: Category, name: &'static str) -> Scope<'static> {
    if !enabled(Level::Full) {
        return Scope::off();
    }
    open_global(Kind::Capture(category), Name::Static(name), None, None)
}

/// A plan step's capture: component path, graph function and root API method, shared
/// strings so that recording copies no text.
#[inline]
pub fn capture_step(
    component: &std::sync::Arc<str>,
    graph_fn: &std::sync::Arc<str>,
    method: &std::sync::Arc<str>,
) -> Scope<'static> {
    if !enabled(Level::Full) {
        return Scope::off();
    }
    open_global(
        Kind::Capture(Category::Backend),
        Name::Shared(component.clone()),
        Some(Name::Shared(graph_fn.clone())),
        Some(Name::Shared(method.clone())),
    )
}
