//! The shipped algorithms on the shipped backends (candle; libtorch with the `tch` feature),
//! compiled once, here. Every entry point is generic over the backend, so without this each
//! crate above that names a backend compiled all seven algorithms and their layouts for it
//! again. A crate compiled below opt-level 2 (every workspace crate above this one is, in
//! dev and test builds) reuses the instances an upstream crate already holds, and a crate
//! only holds the instances it names: this module names them.

use rlgraph_core::Backend;

use crate::algorithm_registry::{distributed_algorithm, segment_algorithm, tensor_algorithm, types_offering};
use crate::from_config::build_agent;

/// The entry points that build the shipped algorithms on `B`, as addresses: naming them is
/// what compiles them.
fn entry_points<B: Backend>() -> [*const (); 5] {
    [
        build_agent::<B> as *const (),
        segment_algorithm::<B> as *const (),
        tensor_algorithm::<B> as *const (),
        distributed_algorithm::<B> as *const (),
        types_offering::<B> as *const (),
    ]
}

/// The entry points on every shipped backend this build has (see the module's description;
/// nothing needs to call it).
#[doc(hidden)]
pub fn compiled_entry_points() -> Vec<[*const (); 5]> {
    let points = std::iter::once(entry_points::<backend_candle::Candle>());
    #[cfg(feature = "tch")]
    let points = points.chain(std::iter::once(entry_points::<backend_tch::Tch>()));
    points.collect()
}
