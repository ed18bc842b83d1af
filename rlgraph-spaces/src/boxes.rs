//! The four primitive spaces: `BoolBox`, `IntBox`, `FloatBox` and `TextBox`.

use crate::dtype::Dtype;
use crate::error::{Result, SpaceError};
use crate::ranks::Ranks;

/// Booleans of a fixed shape.
#[derive(Clone, Debug, PartialEq)]
pub struct BoolBox {
    pub(crate) shape: Vec<usize>,
    pub(crate) ranks: Ranks,
}

/// UTF-8 strings of a fixed shape.
#[derive(Clone, Debug, PartialEq)]
pub struct TextBox {
    pub(crate) shape: Vec<usize>,
    pub(crate) ranks: Ranks,
}

/// Integers of a fixed shape; when bounded, the categories `low..high` (`high` exclusive).
#[derive(Clone, Debug, PartialEq)]
pub struct IntBox {
    pub(crate) shape: Vec<usize>,
    /// `(low, high)` with `high` exclusive; `None` means every value of the dtype.
    pub(crate) bounds: Option<(i64, i64)>,
    pub(crate) dtype: Dtype,
    pub(crate) ranks: Ranks,
}

/// The bounds of a `FloatBox`.
#[derive(Clone, Debug, PartialEq)]
pub enum FloatBounds {
    /// No bounds.
    Unbounded,
    /// One closed interval `[low, high]` for every element.
    Scalar {
        /// The smallest allowed value.
        low: f64,
        /// The largest allowed value.
        high: f64,
    },
    /// A closed interval per element, in row-major order; infinities leave a side open.
    PerElement {
        /// The smallest allowed value of each element.
        low: Vec<f64>,
        /// The largest allowed value of each element.
        high: Vec<f64>,
    },
}

/// Floats of a fixed shape, unbounded or bounded per space or per element.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatBox {
    pub(crate) shape: Vec<usize>,
    pub(crate) bounds: FloatBounds,
    pub(crate) dtype: Dtype,
    pub(crate) ranks: Ranks,
}

pub(crate) fn element_count(shape: &[usize]) -> usize {
    shape.iter().product()
}

impl BoolBox {
    /// Booleans of the given shape (`[]` for a scalar).
    pub fn new(shape: impl Into<Vec<usize>>) -> Self {
        BoolBox {
            shape: shape.into(),
            ranks: Ranks::NONE,
        }
    }
}

impl TextBox {
    /// Strings of the given shape (`[]` for a scalar).
    pub fn new(shape: impl Into<Vec<usize>>) -> Self {
        TextBox {
            shape: shape.into(),
            ranks: Ranks::NONE,
        }
    }
}

impl IntBox {
    /// The scalar categories `0..high`, as RLgraph's `IntBox(high)`.
    pub fn new(high: i64) -> Result<Self> {
        Self::with_bounds(0, high)
    }

    /// The scalar categories `low..high` (`high` exclusive, so `low < high`).
    ///
    /// The dtype is int32, or int64 when the bounds do not fit int32; `with_dtype` changes it.
    pub fn with_bounds(low: i64, high: i64) -> Result<Self> {
        if low >= high {
            return Err(SpaceError::InvalidBounds {
                at: "(root)".into(),
                reason: format!("IntBox needs low < high (high is exclusive), got low {low}, high {high}"),
            });
        }
        let fits_i32 = low >= i32::MIN as i64 && high - 1 <= i32::MAX as i64;
        let dtype = if fits_i32 { Dtype::Int32 } else { Dtype::Int64 };
        Ok(IntBox {
            shape: vec![],
            bounds: Some((low, high)),
            dtype,
            ranks: Ranks::NONE,
        })
    }

    /// Any int32 value, as RLgraph's `IntBox()`.
    pub fn unbounded() -> Self {
        IntBox {
            shape: vec![],
            bounds: None,
            dtype: Dtype::Int32,
            ranks: Ranks::NONE,
        }
    }

    /// The same box with another shape.
    pub fn with_shape(mut self, shape: impl Into<Vec<usize>>) -> Self {
        self.shape = shape.into();
        self
    }

    /// The same box with another integer dtype; the bounds must fit it.
    pub fn with_dtype(self, dtype: Dtype) -> Result<Self> {
        self.checked_dtype(dtype)
    }

    fn checked_dtype(mut self, dtype: Dtype) -> Result<Self> {
        let Some((min, max)) = dtype.int_limits() else {
            return Err(SpaceError::InvalidBounds {
                at: "(root)".into(),
                reason: format!("IntBox needs an integer dtype (int32, int64, uint8), got {dtype}"),
            });
        };
        if let Some((low, high)) = self.bounds {
            if low < min || high - 1 > max {
                return Err(SpaceError::InvalidBounds {
                    at: "(root)".into(),
                    reason: format!("IntBox bounds {low}..{high} do not fit dtype {dtype} ({min}..={max})"),
                });
            }
        }
        self.dtype = dtype;
        Ok(self)
    }

    /// The lowest category, if bounded.
    pub fn low(&self) -> Option<i64> {
        self.bounds.map(|b| b.0)
    }

    /// One past the highest category, if bounded.
    pub fn high(&self) -> Option<i64> {
        self.bounds.map(|b| b.1)
    }

    /// How many categories the box has (`high - low`), if bounded.
    pub fn num_categories(&self) -> Option<u64> {
        self.bounds.map(|(l, h)| h.abs_diff(l))
    }

    /// The inclusive range of allowed values.
    pub(crate) fn inclusive_range(&self) -> (i64, i64) {
        match self.bounds {
            Some((l, h)) => (l, h - 1),
            None => self.dtype.int_limits().unwrap_or((i64::MIN, i64::MAX)),
        }
    }
}

impl FloatBox {
    /// Unbounded float32 values of the given shape.
    pub fn new(shape: impl Into<Vec<usize>>) -> Self {
        FloatBox {
            shape: shape.into(),
            bounds: FloatBounds::Unbounded,
            dtype: Dtype::Float32,
            ranks: Ranks::NONE,
        }
    }

    /// Float32 values of the given shape, each in `[low, high]`.
    pub fn bounded(shape: impl Into<Vec<usize>>, low: f64, high: f64) -> Result<Self> {
        let b = FloatBox {
            bounds: FloatBounds::Scalar { low, high },
            ..FloatBox::new(shape)
        };
        b.validate("(root)")?;
        Ok(b)
    }

    /// Float32 values of the given shape, element `i` in `[low[i], high[i]]` (row-major).
    pub fn per_element(shape: impl Into<Vec<usize>>, low: Vec<f64>, high: Vec<f64>) -> Result<Self> {
        let b = FloatBox {
            bounds: FloatBounds::PerElement { low, high },
            ..FloatBox::new(shape)
        };
        b.validate("(root)")?;
        Ok(b)
    }

    /// The same box with another float dtype.
    pub fn with_dtype(mut self, dtype: Dtype) -> Result<Self> {
        if !dtype.is_float() {
            return Err(SpaceError::InvalidBounds {
                at: "(root)".into(),
                reason: format!("FloatBox needs a float dtype (float32, float64), got {dtype}"),
            });
        }
        self.dtype = dtype;
        Ok(self)
    }

    /// The bounds as given.
    pub fn bounds(&self) -> &FloatBounds {
        &self.bounds
    }

    /// The closed interval of element `i` (row-major), infinite where unbounded.
    pub fn bounds_of(&self, i: usize) -> (f64, f64) {
        match &self.bounds {
            FloatBounds::Unbounded => (f64::NEG_INFINITY, f64::INFINITY),
            FloatBounds::Scalar { low, high } => (*low, *high),
            FloatBounds::PerElement { low, high } => (
                low.get(i).copied().unwrap_or(f64::NEG_INFINITY),
                high.get(i).copied().unwrap_or(f64::INFINITY),
            ),
        }
    }

    pub(crate) fn validate(&self, at: &str) -> Result<()> {
        let bad = |reason: String| SpaceError::InvalidBounds {
            at: at.to_string(),
            reason,
        };
        let check = |i: Option<usize>, low: f64, high: f64| {
            let which = i.map(|i| format!(" of element {i}")).unwrap_or_default();
            if low.is_nan() || high.is_nan() {
                Err(bad(format!("bounds{which} must not be NaN")))
            } else if low > high {
                Err(bad(format!("low{which} ({low}) is greater than high ({high})")))
            } else {
                Ok(())
            }
        };
        match &self.bounds {
            FloatBounds::Unbounded => Ok(()),
            FloatBounds::Scalar { low, high } => check(None, *low, *high),
            FloatBounds::PerElement { low, high } => {
                let n = element_count(&self.shape);
                if low.len() != n || high.len() != n {
                    return Err(SpaceError::InvalidShape {
                        at: at.to_string(),
                        reason: format!(
                            "shape {:?} has {n} elements but low has {} and high has {}",
                            self.shape,
                            low.len(),
                            high.len()
                        ),
                    });
                }
                low.iter()
                    .zip(high)
                    .enumerate()
                    .try_for_each(|(i, (l, h))| check(Some(i), *l, *h))
            }
        }
    }
}
