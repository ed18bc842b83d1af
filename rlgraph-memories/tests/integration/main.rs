//! Every integration test of this crate, as one test binary: one link instead of one per
//! file, and generic code compiled once, which took minutes off CI. Each module was once
//! its own file under `tests/` and still reads as one.

mod common;
mod counting_alloc;
mod frame_stacks;
mod prioritized_replay;
mod queue_and_staging;
mod replay_memory;
mod ring_buffer;

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;
