//! RLgraph's memories as components, so `rlgraph call` and `ComponentTest` can drive them:
//! `replay-memory`, `prioritized-replay`, `ring-buffer` and `fifo-queue` over the host
//! memories of `rlgraph-memories`, with RLgraph's API names.
//!
//! The records stay on the host (see `rlgraph-memories` for why); each call moves one batch
//! between the graph's tensors and the memory. The memory is made when the graph is built,
//! from the space of `insert_records(records)`, so a memory component needs that input.
//! Agents hold their memories directly, outside any graph, and checkpoint them with the
//! executor; a memory component's records are not part of the graph's variables.

use std::sync::{Arc, Mutex, MutexGuard};

use rlgraph_core::convert::{tree_to_value, value_to_tree};
use rlgraph_core::spaces::{Array, FloatBox, IntBox, Space, Value};
use rlgraph_core::{
    stack, unstack, Backend, BackendCore, Component, CoreError, GraphFn, KernelCtx, Param, Result, Tree,
};
use rlgraph_memories::{FifoQueue, PrioritizedReplay, ReplayMemory, RingBuffer};

use crate::spec::{normalize_type, Spec};
use crate::spec_keys;

/// Which memory a component holds, with its settings.
#[derive(Clone, Debug, PartialEq)]
pub enum MemoryKind {
    /// Uniform replay (RLgraph's `ReplayMemory`).
    Replay,
    /// Proportional prioritized replay (RLgraph's `PrioritizedReplay`).
    Prioritized {
        /// How strongly priorities shape sampling.
        alpha: f64,
        /// The importance-weight correction.
        beta: f64,
    },
    /// Records in insertion order (RLgraph's `RingBuffer`).
    RingBuffer,
    /// A bounded first-in first-out queue (RLgraph's `FIFOQueue`).
    FifoQueue,
}

impl MemoryKind {
    /// RLgraph's type name for this memory (also the component's default scope).
    pub fn type_name(&self) -> &'static str {
        match self {
            MemoryKind::Replay => "replay-memory",
            MemoryKind::Prioritized { .. } => "prioritized-replay",
            MemoryKind::RingBuffer => "ring-buffer",
            MemoryKind::FifoQueue => "fifo-queue",
        }
    }
}

/// The memory itself, once the build has given it its record space.
enum Held {
    Replay(ReplayMemory),
    Prioritized(PrioritizedReplay),
    RingBuffer(RingBuffer),
    FifoQueue(FifoQueue),
}

/// The memory slot the component's kernels share: empty until the build names the records.
#[derive(Clone, Default)]
struct Slot(Arc<Mutex<Option<(Held, Space)>>>);

impl Slot {
    fn lock(&self) -> MutexGuard<'_, Option<(Held, Space)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The record space (without batch rank), as the build found it.
    fn record_space(&self, component: &str) -> Result<Space> {
        self.lock()
            .as_ref()
            .map(|(_, s)| s.clone())
            .ok_or_else(|| unbuilt(component))
    }
}

fn unbuilt(component: &str) -> CoreError {
    CoreError::Component {
        component: component.into(),
        method: Some("insert_records".into()),
        reason: "a memory takes its record space from insert_records(records); give that input a space".into(),
    }
}

/// The memory component `name` of `kind` holding up to `capacity` records. API methods:
/// `insert_records(records)` -> the number of records held; `get_records(num_records)` ->
/// the records (prioritized replay: records, their indices and importance weights);
/// `get_size()`; prioritized replay adds `update_records(indices, update)` and the ring
/// buffer `get_episodes(num_episodes)`. Sampling draws from the executor's seeded RNG.
pub fn memory_component<B: Backend>(name: &str, kind: MemoryKind, capacity: usize) -> Component<B> {
    let slot = Slot::default();
    let (make, infer_get) = (slot.clone(), slot.clone());
    let memory_name = name.to_string();
    let prioritized = matches!(kind, MemoryKind::Prioritized { .. });
    let ring_buffer = kind == MemoryKind::RingBuffer;
    let mut c = Component::new(name)
        .with_kind(kind.type_name())
        .variables(move |spaces| {
            let space = spaces
                .try_get("records")
                .ok_or_else(|| unbuilt(&memory_name))?
                .with_batch_rank(false);
            let held = match kind.clone() {
                MemoryKind::Replay => Held::Replay(ReplayMemory::new(&memory_name, &space, capacity)?),
                MemoryKind::Prioritized { alpha, beta } => {
                    Held::Prioritized(PrioritizedReplay::new(&memory_name, &space, capacity, alpha, beta)?)
                }
                MemoryKind::RingBuffer => Held::RingBuffer(RingBuffer::new(&memory_name, &space, capacity)?),
                MemoryKind::FifoQueue => Held::FifoQueue(FifoQueue::new(&memory_name, &space, capacity)?),
            };
            *make.lock() = Some((held, space));
            Ok(vec![])
        })
        .api("insert_records", vec![Param::new("records")], |ctx, args| {
            ctx.graph_fn("insert", &[args.get(0)?])
        })
        .api("get_records", vec![Param::new("num_records")], |ctx, args| {
            ctx.graph_fn("get", &[args.get(0)?])
        })
        .api("get_size", vec![], |ctx, _| ctx.graph_fn("size", &[]))
        .graph_fn(memory_fn("insert", &slot, |ctx, held, space, xs| {
            let records = tree_to_value::<B>(&xs[0], Some(&space.with_batch_rank(true)))?;
            match held {
                Held::Replay(m) => m.insert_records(&records)?,
                Held::Prioritized(m) => m.insert_records(&records)?,
                Held::RingBuffer(m) => m.insert_records(&records)?,
                Held::FifoQueue(m) => m.try_enqueue_all(unstack(&records)?)?,
            }
            Ok(vec![count::<B>(ctx, size_of(held))?])
        }))
        .graph_fn(memory_fn("size", &slot, |ctx, held, _, _| {
            Ok(vec![count::<B>(ctx, size_of(held))?])
        }))
        .graph_fn(
            memory_fn("get", &slot, |ctx, held, _, xs| {
                let n = host_count::<B>(&xs[0])?;
                let rng = &mut *ctx.rng();
                let (records, extra) = match held {
                    Held::Replay(m) => (m.get_records(n, rng)?, None),
                    Held::Prioritized(m) => {
                        let s = m.get_records(n, rng)?;
                        (s.records, Some((s.indices, s.weights)))
                    }
                    Held::RingBuffer(m) => (m.get_records(n)?, None),
                    Held::FifoQueue(m) => (stack(&m.try_dequeue_exactly(n)?)?, None),
                };
                let mut out = vec![value_to_tree::<B>(&records, ctx.device())?];
                if let Some((indices, weights)) = extra {
                    let indices: Vec<i64> = indices.iter().map(|&i| i as i64).collect();
                    out.push(value_to_tree::<B>(
                        &Value::Int64(Array::new([n], indices)?),
                        ctx.device(),
                    )?);
                    let weights: Vec<f32> = weights.iter().map(|&w| w as f32).collect();
                    out.push(value_to_tree::<B>(
                        &Value::Float32(Array::new([n], weights)?),
                        ctx.device(),
                    )?);
                }
                Ok(out)
            })
            .outputs(if prioritized { 3 } else { 1 })
            .infer(move |ctx, _| {
                let records = infer_get.record_space(ctx.component())?.with_batch_rank(true);
                let mut out = vec![records];
                if prioritized {
                    out.push(Space::from(IntBox::unbounded()).with_batch_rank(true));
                    out.push(Space::from(FloatBox::new([])).with_batch_rank(true));
                }
                Ok(out)
            }),
        );
    if prioritized {
        c = c
            .api(
                "update_records",
                vec![Param::new("indices"), Param::new("update")],
                |ctx, args| ctx.graph_fn("update", &[args.get(0)?, args.get(1)?]),
            )
            .graph_fn(memory_fn("update", &slot, |ctx, held, _, xs| {
                let indices = host_numbers::<B>(&xs[0])?
                    .into_iter()
                    .map(|i| i.max(0.0) as usize)
                    .collect::<Vec<_>>();
                let update = host_numbers::<B>(&xs[1])?;
                if let Held::Prioritized(m) = held {
                    m.update_records(&indices, &update)?;
                }
                Ok(vec![count::<B>(ctx, size_of(held))?])
            }));
    }
    if ring_buffer {
        let infer_episodes = slot.clone();
        c = c
            .api("get_episodes", vec![Param::new("num_episodes")], |ctx, args| {
                ctx.graph_fn("episodes", &[args.get(0)?])
            })
            .graph_fn(
                memory_fn("episodes", &slot, |ctx, held, _, xs| {
                    let n = host_count::<B>(&xs[0])?;
                    let Held::RingBuffer(m) = held else { return Ok(vec![]) };
                    Ok(vec![value_to_tree::<B>(&m.get_episodes(n), ctx.device())?])
                })
                .infer(move |ctx, _| {
                    Ok(vec![infer_episodes
                        .record_space(ctx.component())?
                        .with_batch_rank(true)])
                }),
            );
    }
    c
}

/// The records a memory holds.
fn size_of(held: &Held) -> usize {
    match held {
        Held::Replay(m) => m.size(),
        Held::Prioritized(m) => m.size(),
        Held::RingBuffer(m) => m.size(),
        Held::FifoQueue(m) => m.size(),
    }
}

type MemoryKernel<B> = fn(
    &mut KernelCtx<'_, B>,
    &mut Held,
    &Space,
    &[Tree<<B as BackendCore>::Tensor>],
) -> Result<Vec<Tree<<B as BackendCore>::Tensor>>>;

/// A graph function `name` that runs `kernel` on the memory in `slot`; the size it returns
/// is an IntBox scalar unless the caller infers otherwise.
fn memory_fn<B: Backend>(name: &str, slot: &Slot, kernel: MemoryKernel<B>) -> GraphFn<B> {
    let slot = slot.clone();
    GraphFn::new(name, move |ctx, xs| {
        let mut guard = slot.lock();
        let (held, space) = guard.as_mut().ok_or_else(|| unbuilt(ctx.component()))?;
        kernel(ctx, held, space, xs)
    })
    .infer(|_, _| Ok(vec![Space::from(IntBox::unbounded())]))
}

/// A count as an integer scalar tensor.
fn count<B: Backend>(ctx: &KernelCtx<'_, B>, n: usize) -> Result<Tree<B::Tensor>> {
    value_to_tree::<B>(&Value::Int64(Array::scalar(n as i64)), ctx.device())
}

/// The numbers of a tensor, on the host.
fn host_numbers<B: Backend>(t: &Tree<B::Tensor>) -> Result<Vec<f64>> {
    let leaf = t.as_leaf().ok_or_else(|| CoreError::Config {
        at: "memory".into(),
        reason: "expected a tensor of numbers, got a container".into(),
    })?;
    Ok(B::to_host(leaf)?.data.to_f64())
}

/// A record count given as a scalar tensor.
fn host_count<B: Backend>(t: &Tree<B::Tensor>) -> Result<usize> {
    let n = host_numbers::<B>(t)?;
    match n.as_slice() {
        [x] if *x >= 0.0 && x.fract() == 0.0 => Ok(*x as usize),
        other => Err(CoreError::Config {
            at: "memory".into(),
            reason: format!("the number of records must be one whole number >= 0, got {other:?}"),
        }),
    }
}

/// The memory types a spec may name (RLgraph's spellings).
pub const MEMORY_TYPES: &[&str] = &["replay-memory", "prioritized-replay", "ring-buffer", "fifo-queue"];

/// Builds one of [`MEMORY_TYPES`] from its spec (`capacity`, RLgraph's default 1000;
/// prioritized replay's `alpha` 1.0 and `beta` 0.0), or `None` if `kind` is none of them.
pub(crate) fn memory_from_spec<B: Backend>(
    kind: &str,
    spec: &serde_json::Value,
    at: &str,
) -> Option<Result<Component<B>>> {
    let memory = match normalize_type(kind).as_str() {
        "replaymemory" | "replay" => MemoryKind::Replay,
        "prioritizedreplay" => MemoryKind::Prioritized { alpha: 1.0, beta: 0.0 },
        "ringbuffer" => MemoryKind::RingBuffer,
        "fifoqueue" => MemoryKind::FifoQueue,
        _ => return None,
    };
    let build = || {
        let s = Spec::new(spec, at)?;
        let memory = match memory {
            MemoryKind::Prioritized { alpha, beta } => {
                s.only(spec_keys::PRIORITIZED_REPLAY.keys)?;
                MemoryKind::Prioritized {
                    alpha: s.f64_or("alpha", alpha)?,
                    beta: s.f64_or("beta", beta)?,
                }
            }
            other => {
                // Every memory without priorities takes the same keys.
                s.only(spec_keys::REPLAY_MEMORY.keys)?;
                other
            }
        };
        let capacity = s.positive_or("capacity", 1000)?;
        Ok(memory_component(
            s.str_or("scope", memory.type_name())?,
            memory,
            capacity,
        ))
    };
    Some(build())
}
