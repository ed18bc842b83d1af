//! `ComponentTest`: build any component alone from input spaces, call its API methods, and
//! compare results with nested approximate assertions.

use std::collections::BTreeMap;

use approx::relative_eq;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{Space, Value};

use crate::backend::{Backend, Device, HostTensor};
use crate::builder::BuildOptions;
use crate::component::Component;
use crate::convert::{host_to_value, value_to_host};
use crate::device_map::DeviceMap;
use crate::error::{CoreError, Result};
use crate::executor::GraphExecutor;

/// How close numbers must be: `|a - e| <= atol + rtol * |e|`, or equal to `decimals` places.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

impl Tolerance {
    /// Equal when rounded to `n` decimal places (RLgraph's `decimals=n`): `atol = 1.5 * 10^-n`.
    pub fn decimals(n: i32) -> Self {
        Tolerance {
            atol: 1.5 * 10f64.powi(-n),
            rtol: 0.0,
        }
    }

    /// Relative and absolute tolerances.
    pub fn new(atol: f64, rtol: f64) -> Self {
        Tolerance { atol, rtol }
    }
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance { atol: 1e-6, rtol: 1e-5 }
    }
}

/// Compares two values leaf by leaf; the error names the flat key and element that differ.
pub fn check_close(actual: &Value, expected: &Value, tol: Tolerance) -> std::result::Result<(), String> {
    let a = actual.flatten();
    let e = expected.flatten();
    let keys = |v: &[(String, &Value)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    if keys(&a) != keys(&e) {
        return Err(format!(
            "structure differs: got keys {:?}, expected {:?}",
            keys(&a),
            keys(&e)
        ));
    }
    for ((key, x), (_, y)) in a.iter().zip(&e) {
        let at = if key.is_empty() { "(root)" } else { key };
        if x.shape() != y.shape() {
            return Err(format!("{at}: shape {:?}, expected {:?}", x.shape(), y.shape()));
        }
        if let (Value::Text(p), Value::Text(q)) = (x, y) {
            if p != q {
                return Err(format!("{at}: {:?}, expected {:?}", p.data(), q.data()));
            }
            continue;
        }
        let p = value_to_host(x).map_err(|e| e.to_string())?.data.to_f64();
        let q = value_to_host(y).map_err(|e| e.to_string())?.data.to_f64();
        for (i, (u, v)) in p.iter().zip(&q).enumerate() {
            let ok = (u.is_nan() && v.is_nan())
                || (u - v).abs() <= tol.atol
                || (tol.rtol > 0.0 && relative_eq!(*u, *v, epsilon = tol.atol, max_relative = tol.rtol));
            if !ok {
                return Err(format!(
                    "{at}: element {i} is {u}, expected {v} (atol {}, rtol {})",
                    tol.atol, tol.rtol
                ));
            }
        }
    }
    Ok(())
}

/// The device tests build on for backend `B`: the one `RLGRAPH_TEST_DEVICE` names (`cpu`,
/// `cuda:N`) where `B` has it, else the CPU. So one test suite also runs on a GPU machine
/// (`RLGRAPH_TEST_DEVICE=cuda:0`): the backends that have the GPU use it, the others compare
/// from the CPU.
pub fn test_device<B: Backend>() -> Device {
    std::env::var("RLGRAPH_TEST_DEVICE")
        .ok()
        .and_then(|text| Device::parse(&text))
        .filter(|device| B::device_available(*device))
        .unwrap_or(Device::Cpu)
}

/// A component built alone, as the root, on backend `B`, ready to be called.
pub struct ComponentTest<B: Backend> {
    exec: GraphExecutor<B>,
    rng: ChaCha8Rng,
}

impl<B: Backend> ComponentTest<B> {
    /// Builds `component` from the spaces of its API methods' parameters, seeded by `seed`,
    /// on [`test_device`].
    pub fn new<'a>(
        component: Component<B>,
        input_spaces: impl IntoIterator<Item = (&'a str, Space)>,
        seed: u64,
    ) -> Result<Self> {
        let options = BuildOptions {
            device_map: DeviceMap::new(test_device::<B>()),
            ..Default::default()
        };
        Self::with_options(component, input_spaces, seed, &options)
    }

    /// Like `new`, with build options (device map, DOT on error).
    pub fn with_options<'a>(
        component: Component<B>,
        input_spaces: impl IntoIterator<Item = (&'a str, Space)>,
        seed: u64,
        options: &BuildOptions,
    ) -> Result<Self> {
        let spaces: BTreeMap<String, Space> = input_spaces.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        // A space under a name no parameter has would be ignored, and the component then
        // reported input-incomplete for the parameter the caller meant.
        let params: std::collections::BTreeSet<&str> = component
            .api_methods()
            .iter()
            .flat_map(|m| m.params.iter().map(|p| p.name.as_str()))
            .collect();
        if let Some(unknown) = spaces.keys().find(|k| !params.contains(k.as_str())) {
            return Err(CoreError::Config {
                at: format!("ComponentTest of '{}': input space '{unknown}'", component.name()),
                reason: format!(
                    "no API method of the component has a parameter of this name; its parameters are: {}",
                    params.into_iter().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        let exec = GraphExecutor::build(component, &spaces, options, seed)?;
        Ok(ComponentTest {
            exec,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
        })
    }

    /// Calls API method `method` with `inputs`.
    pub fn call(&mut self, method: &str, inputs: &[Value]) -> Result<Vec<Value>> {
        self.exec.execute(method, inputs)
    }

    /// Calls `method` with inputs sampled from its parameters' spaces (batch size `batch`);
    /// returns the inputs and the outputs.
    pub fn call_sampled(&mut self, method: &str, batch: Option<usize>) -> Result<(Vec<Value>, Vec<Value>)> {
        let inputs: Vec<Value> = self
            .exec
            .plan(method)?
            .inputs()
            .map(|(_, s)| s.sample(batch, &mut self.rng))
            .collect();
        let outputs = self.call(method, &inputs)?;
        Ok((inputs, outputs))
    }

    /// Calls `method` and panics, naming the method, output and element, unless the outputs
    /// match `expected` within `tol`.
    #[track_caller]
    pub fn assert_call(&mut self, method: &str, inputs: &[Value], expected: &[Value], tol: Tolerance) {
        let got = self
            .call(method, inputs)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", method, B::NAME));
        assert_eq!(got.len(), expected.len(), "{method} on {}: number of outputs", B::NAME);
        for (i, (g, e)) in got.iter().zip(expected).enumerate() {
            if let Err(msg) = check_close(g, e, tol) {
                panic!("{method} on {}: output {i}: {msg}\n got: {g:?}", B::NAME);
            }
        }
    }

    /// The value of the variable at `path` (relative to the component, or a full scope path).
    pub fn get_variable(&self, path: &str) -> Result<Value> {
        let full = self.full_path(path);
        host_to_value(self.exec.get_variable(&full)?, None)
    }

    /// Sets the variable at `path` (relative or full) from a value of its shape.
    pub fn set_variable(&self, path: &str, value: &Value) -> Result<()> {
        let full = self.full_path(path);
        let host: HostTensor = value_to_host(value)?;
        let i = self.exec.store().index(&full)?;
        let dtype = self.exec.store().info(i).decl.dtype;
        let host = HostTensor::new(
            host.shape.clone(),
            crate::backend::HostData::from_f64(&host.data.to_f64(), dtype),
        )?;
        self.exec.set_variable(&full, &host)
    }

    fn full_path(&self, path: &str) -> String {
        let root = &self.exec.built().root.name;
        if path == root || path.starts_with(&format!("{root}/")) {
            path.to_string()
        } else {
            format!("{root}/{path}")
        }
    }

    /// The executor underneath.
    pub fn executor(&mut self) -> &mut GraphExecutor<B> {
        &mut self.exec
    }
}
