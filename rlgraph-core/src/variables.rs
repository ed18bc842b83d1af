//! Variables: declared from input spaces at build time, created on a backend by the executor.

use std::collections::BTreeMap;

use rand::RngCore;

use crate::backend::{Backend, DType, Device, HostData, HostTensor};
use crate::error::{CoreError, Result};

/// How a variable's first value is made.
#[derive(Clone, Debug, PartialEq)]
pub enum Initializer {
    /// Every element the same value.
    Constant(f64),
    /// All zeros.
    Zeros,
    /// Glorot (Xavier) uniform: `U(-l, l)` with `l = sqrt(6 / (fan_in + fan_out))`.
    GlorotUniform,
    /// Normal with this mean and standard deviation.
    Normal {
        /// The mean.
        mean: f64,
        /// The standard deviation.
        std: f64,
    },
    /// Normal with this mean and standard deviation, redrawn until within two standard deviations.
    TruncatedNormal {
        /// The mean.
        mean: f64,
        /// The standard deviation.
        std: f64,
    },
    /// Exactly these values (row-major), as RLgraph's `np.array` initializers.
    Values(Vec<f64>),
    /// Uniform in `[low, high)`: TensorFlow's `random_uniform`.
    Uniform {
        /// The lowest value.
        low: f64,
        /// The bound no value reaches.
        high: f64,
    },
    /// Keras' `VarianceScaling`: variance `scale / n`, `n` the fan the mode names.
    VarianceScaling {
        /// The variance times the fan.
        scale: f64,
        /// Which fan `n` is.
        mode: FanMode,
        /// The shape of the draws.
        distribution: ScalingDistribution,
    },
}

/// Which fan a [`Initializer::VarianceScaling`] divides by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FanMode {
    /// Inputs per output unit.
    FanIn,
    /// Outputs per input unit.
    FanOut,
    /// The mean of the two.
    FanAvg,
}

/// The draws of a [`Initializer::VarianceScaling`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalingDistribution {
    /// Uniform in `±sqrt(3 scale / n)`.
    Uniform,
    /// Normal cut at two standard deviations, widened so the variance is still `scale / n`.
    TruncatedNormal,
    /// Plain normal of variance `scale / n`.
    Normal,
}

/// The standard deviation of a unit normal cut at ±2, by which Keras widens its truncated draws.
const TRUNCATED_UNIT_STD: f64 = 0.879_625_661_034_239_8;

/// The most elements one variable may have (2^30: 4 GiB of float32); the build refuses larger.
pub const MAX_VARIABLE_ELEMENTS: usize = 1 << 30;

/// A variable a component asks for once its input spaces are known.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// The name within the component (`kernel`, `bias`, ...).
    pub name: String,
    /// The dimensions.
    pub shape: Vec<usize>,
    /// The element type.
    pub dtype: DType,
    /// How the first value is made.
    pub init: Initializer,
    /// Whether optimizers may change it.
    pub trainable: bool,
}

impl VarDecl {
    /// A trainable f32 variable.
    pub fn new(name: impl Into<String>, shape: impl Into<Vec<usize>>, init: Initializer) -> Self {
        VarDecl {
            name: name.into(),
            shape: shape.into(),
            dtype: DType::F32,
            init,
            trainable: true,
        }
    }

    /// The same declaration, not trainable.
    pub fn frozen(mut self) -> Self {
        self.trainable = false;
        self
    }

    /// The same declaration with another dtype.
    pub fn with_dtype(mut self, dtype: DType) -> Self {
        self.dtype = dtype;
        self
    }

    /// The first value, drawn from `rng` where the initializer is random.
    pub fn initial_value(&self, rng: &mut dyn RngCore) -> Result<HostTensor> {
        let n: usize = self.shape.iter().product();
        let normal = |mean: f64, std: f64, rng: &mut dyn RngCore| {
            mean + std * rand_distr::Distribution::<f64>::sample(&rand_distr::StandardNormal, rng)
        };
        let uniform = |low: f64, high: f64, rng: &mut dyn RngCore| {
            low + (high - low) * ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
        };
        let truncated = |mean: f64, std: f64, rng: &mut dyn RngCore| loop {
            let x = normal(0.0, 1.0, rng);
            if x.abs() <= 2.0 {
                break mean + std * x;
            }
        };
        let dtype = self.dtype;
        // Drawn straight into the variable's dtype, one value at a time.
        let data = match &self.init {
            Initializer::Constant(c) => HostData::collect_f64(std::iter::repeat_n(*c, n), dtype),
            Initializer::Zeros => HostData::collect_f64(std::iter::repeat_n(0.0, n), dtype),
            Initializer::GlorotUniform => {
                let (fan_in, fan_out) = fans(&self.shape);
                let limit = (6.0 / (fan_in + fan_out).max(1.0)).sqrt();
                HostData::collect_f64((0..n).map(|_| uniform(-limit, limit, &mut *rng)), dtype)
            }
            Initializer::Uniform { low, high } => {
                HostData::collect_f64((0..n).map(|_| uniform(*low, *high, &mut *rng)), dtype)
            }
            Initializer::VarianceScaling {
                scale,
                mode,
                distribution,
            } => {
                let (fan_in, fan_out) = fans(&self.shape);
                let fan = match mode {
                    FanMode::FanIn => fan_in,
                    FanMode::FanOut => fan_out,
                    FanMode::FanAvg => (fan_in + fan_out) / 2.0,
                };
                let variance = scale / fan.max(1.0);
                match distribution {
                    ScalingDistribution::Uniform => {
                        let limit = (3.0 * variance).sqrt();
                        HostData::collect_f64((0..n).map(|_| uniform(-limit, limit, &mut *rng)), dtype)
                    }
                    ScalingDistribution::TruncatedNormal => {
                        let std = variance.sqrt() / TRUNCATED_UNIT_STD;
                        HostData::collect_f64((0..n).map(|_| truncated(0.0, std, &mut *rng)), dtype)
                    }
                    ScalingDistribution::Normal => {
                        HostData::collect_f64((0..n).map(|_| normal(0.0, variance.sqrt(), &mut *rng)), dtype)
                    }
                }
            }
            Initializer::Normal { mean, std } => {
                HostData::collect_f64((0..n).map(|_| normal(*mean, *std, &mut *rng)), dtype)
            }
            Initializer::TruncatedNormal { mean, std } => {
                HostData::collect_f64((0..n).map(|_| truncated(*mean, *std, &mut *rng)), dtype)
            }
            Initializer::Values(v) => {
                if v.len() != n {
                    return Err(CoreError::Variable {
                        path: self.name.clone(),
                        reason: format!(
                            "initializer has {} values but shape {:?} needs {n}",
                            v.len(),
                            self.shape
                        ),
                    });
                }
                HostData::from_f64(v, dtype)
            }
        };
        HostTensor::new(self.shape.clone(), data)
    }
}

/// Fan-in and fan-out as Keras computes them: dense `[in, out]`; conv `[o, i, kh, kw]`.
fn fans(shape: &[usize]) -> (f64, f64) {
    match shape {
        [] => (1.0, 1.0),
        [n] => (*n as f64, *n as f64),
        [a, b] => (*a as f64, *b as f64),
        [o, i, rest @ ..] => {
            let field: usize = rest.iter().product();
            ((*i * field) as f64, (*o * field) as f64)
        }
    }
}

/// Where a variable lives and what it is.
#[derive(Clone, Debug)]
pub struct VarInfo {
    /// The full scope path (`root/dense/kernel`).
    pub path: String,
    /// The declaration.
    pub decl: VarDecl,
    /// The device it was created on.
    pub device: Device,
}

/// The variables of a built graph on one backend, addressed by index or by scope path.
pub struct VariableStore<B: Backend> {
    infos: Vec<VarInfo>,
    vars: Vec<B::Var>,
    by_path: BTreeMap<String, usize>,
}

impl<B: Backend> VariableStore<B> {
    /// Creates every declared variable on its device, drawing random initial values from `rng`.
    pub fn create(infos: Vec<VarInfo>, rng: &mut dyn RngCore) -> Result<Self> {
        let mut vars = Vec::with_capacity(infos.len());
        let mut by_path = BTreeMap::new();
        for (i, info) in infos.iter().enumerate() {
            // Each copy is dropped as soon as the next exists: a large variable peaks at two
            // copies of its values, not three (host values, tensor, variable).
            let tensor = B::from_host(&info.decl.initial_value(rng)?, info.device)?;
            let var = B::var(&tensor)?;
            drop(tensor);
            vars.push(var);
            by_path.insert(info.path.clone(), i);
        }
        Ok(VariableStore { infos, vars, by_path })
    }

    /// How many variables there are.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// The index of the variable at `path`.
    pub fn index(&self, path: &str) -> Result<usize> {
        self.by_path.get(path).copied().ok_or_else(|| CoreError::Variable {
            path: path.into(),
            reason: format!(
                "no such variable; known: {}",
                self.by_path.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        })
    }

    /// The variable at index `i`.
    pub fn var(&self, i: usize) -> &B::Var {
        &self.vars[i]
    }

    /// What the variable at index `i` is.
    pub fn info(&self, i: usize) -> &VarInfo {
        &self.infos[i]
    }

    /// All variables' descriptions, in creation order.
    pub fn infos(&self) -> &[VarInfo] {
        &self.infos
    }

    /// The current value of the variable at `path`, on the host.
    pub fn get(&self, path: &str) -> Result<HostTensor> {
        B::to_host(B::var_tensor(&self.vars[self.index(path)?]))
    }

    /// Overwrites the variable at `path`; the value must have its shape and dtype.
    pub fn set(&self, path: &str, value: &HostTensor) -> Result<()> {
        let i = self.check(path, value)?;
        B::var_set(&self.vars[i], &B::from_host(value, self.infos[i].device)?)
    }

    /// The index of the variable at `path`, if `value` has its shape and dtype.
    pub fn check(&self, path: &str, value: &HostTensor) -> Result<usize> {
        let i = self.index(path)?;
        let decl = &self.infos[i].decl;
        if value.shape != decl.shape || value.dtype() != decl.dtype {
            return Err(CoreError::Variable {
                path: path.into(),
                reason: format!(
                    "expected {:?} {:?}, got {:?} {:?}; nothing was changed",
                    decl.dtype,
                    decl.shape,
                    value.dtype(),
                    value.shape
                ),
            });
        }
        Ok(i)
    }

    /// Every variable's value by path.
    pub fn get_all(&self) -> Result<BTreeMap<String, HostTensor>> {
        self.by_path
            .iter()
            .map(|(p, &i)| Ok((p.clone(), B::to_host(B::var_tensor(&self.vars[i]))?)))
            .collect()
    }
}
