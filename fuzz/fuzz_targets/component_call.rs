//! `rlgraph call`'s spec runner on arbitrary text: components and agents built from any
//! spec, their variables set and their API methods called with any inputs. Refusals are
//! fine; panics and aborts are not.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = rlgraph_cli::call_command::run_spec(text);
});
