//! Seeded sampling and zero-filling of spaces.

use rand::Rng;
use rand_distr::{Distribution, Exp1, StandardNormal};

use crate::boxes::{element_count, FloatBox};
use crate::dtype::Dtype;
use crate::ranks::{ExtraRank, Ranks};
use crate::space::Space;
use crate::value::{Array, Value};

/// How long each extra leading dimension of a sample is.
#[derive(Clone, Copy, Debug)]
struct Lengths {
    /// Fills the batch rank; stacks samples along a new axis for spaces without one.
    batch: Option<usize>,
    /// Fills the time rank (1 when not given); ignored by spaces without one.
    time: Option<usize>,
    /// Whether `batch` may add an axis that the space does not have (numpy's `size=`).
    stack: bool,
}

impl Lengths {
    fn leading_dims(&self, ranks: Ranks) -> Vec<usize> {
        if !ranks.batch && self.stack {
            if let Some(n) = self.batch {
                let mut dims = vec![n];
                dims.extend(Lengths { stack: false, ..*self }.leading_dims(ranks));
                return dims;
            }
        }
        ranks
            .order()
            .into_iter()
            .map(|r| match r {
                ExtraRank::Batch => self.batch.unwrap_or(1),
                ExtraRank::Time => self.time.unwrap_or(1),
            })
            .collect()
    }
}

impl Space {
    /// A random value of this space, drawn from `rng`.
    ///
    /// `size` is the batch size: a space with a batch rank gets a batch dimension of
    /// `size` (1 when `None`); a space without one gets `size` samples stacked along a new
    /// leading axis, as numpy's `size=` does (none when `None`). A time rank gets length 1;
    /// use [`Space::sample_sequence`] for longer sequences.
    ///
    /// Bounded ints are uniform over their categories, bounded floats uniform over
    /// `[low, high]`, unbounded floats standard normal (a side bounded by one finite bound
    /// gets that bound plus or minus an Exp(1) draw), text is 0 to 8 lowercase letters.
    pub fn sample<R: Rng + ?Sized>(&self, size: Option<usize>, rng: &mut R) -> Value {
        self.sample_with(
            Lengths {
                batch: size,
                time: None,
                stack: true,
            },
            rng,
        )
    }

    /// A random value whose batch and time ranks (where the space has them) have the given lengths.
    pub fn sample_sequence<R: Rng + ?Sized>(&self, batch: usize, time: usize, rng: &mut R) -> Value {
        self.sample_with(
            Lengths {
                batch: Some(batch),
                time: Some(time),
                stack: false,
            },
            rng,
        )
    }

    /// `n` independent samples, each as `sample(None, rng)` gives them (RLgraph's `horizontal=True`).
    pub fn sample_horizontal<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<Value> {
        (0..n).map(|_| self.sample(None, rng)).collect()
    }

    /// A value of all zeros (false, empty strings), shaped as `sample(size, ..)` would be.
    ///
    /// A bounded space whose range excludes zero still gets zeros: this is a filler value, as
    /// RLgraph's `zeros` is, not necessarily a member.
    pub fn zeros(&self, size: Option<usize>) -> Value {
        let lengths = Lengths {
            batch: size,
            time: None,
            stack: true,
        };
        self.map_values(&lengths, &mut |space, dims| {
            let n = element_count(&dims);
            match space.dtype().unwrap_or(Dtype::Float32) {
                Dtype::Bool => Value::Bool(array(dims, vec![false; n])),
                Dtype::Int32 => Value::Int32(array(dims, vec![0; n])),
                Dtype::Int64 => Value::Int64(array(dims, vec![0; n])),
                Dtype::Uint8 => Value::Uint8(array(dims, vec![0; n])),
                Dtype::Float32 => Value::Float32(array(dims, vec![0.0; n])),
                Dtype::Float64 => Value::Float64(array(dims, vec![0.0; n])),
                Dtype::Text => Value::Text(array(dims, vec![String::new(); n])),
            }
        })
    }

    fn sample_with<R: Rng + ?Sized>(&self, lengths: Lengths, rng: &mut R) -> Value {
        self.map_values(&lengths, &mut |space, dims| {
            let n = element_count(&dims);
            match space {
                Space::Bool(_) => Value::Bool(array(dims, (0..n).map(|_| rng.random_bool(0.5)).collect())),
                Space::Int(b) => {
                    let (low, high) = b.inclusive_range();
                    let draws: Vec<i64> = (0..n).map(|_| rng.random_range(low..=high)).collect();
                    // The draws lie in the dtype's range (checked when the box was made), so the
                    // narrowing casts below are exact.
                    match b.dtype {
                        Dtype::Int64 => Value::Int64(array(dims, draws)),
                        Dtype::Uint8 => Value::Uint8(array(dims, draws.into_iter().map(|x| x as u8).collect())),
                        _ => Value::Int32(array(dims, draws.into_iter().map(|x| x as i32).collect())),
                    }
                }
                Space::Float(b) => {
                    let per_item = element_count(&b.shape).max(1);
                    let draws: Vec<f64> = (0..n).map(|i| sample_float(b, i % per_item, rng)).collect();
                    if b.dtype == Dtype::Float64 {
                        Value::Float64(array(dims, draws))
                    } else {
                        let narrowed = draws
                            .iter()
                            .enumerate()
                            .map(|(i, &x)| {
                                // Rounding to f32 may step past a bound; clamp to the f32 bounds.
                                let (l, h) = b.bounds_of(i % per_item);
                                (x as f32).clamp(l as f32, h as f32)
                            })
                            .collect();
                        Value::Float32(array(dims, narrowed))
                    }
                }
                Space::Text(_) => Value::Text(array(
                    dims,
                    (0..n)
                        .map(|_| {
                            let len = rng.random_range(0..=8);
                            (0..len).map(|_| rng.random_range(b'a'..=b'z') as char).collect()
                        })
                        .collect(),
                )),
                Space::Dict(_) | Space::Tuple(_) => Value::Tuple(vec![]),
            }
        })
    }

    /// Builds a value of the same nesting, each leaf made by `leaf(space, full_dims)`.
    fn map_values(&self, lengths: &Lengths, leaf: &mut dyn FnMut(&Space, Vec<usize>) -> Value) -> Value {
        match self {
            Space::Dict(d) => Value::Dict(
                d.entries()
                    .iter()
                    .map(|(k, s)| (k.clone(), s.map_values(lengths, leaf)))
                    .collect(),
            ),
            Space::Tuple(t) => Value::Tuple(t.items().iter().map(|s| s.map_values(lengths, leaf)).collect()),
            primitive => {
                let mut dims = lengths.leading_dims(primitive.ranks().unwrap_or_default());
                dims.extend_from_slice(primitive.shape().unwrap_or(&[]));
                leaf(primitive, dims)
            }
        }
    }
}

fn array<T>(dims: Vec<usize>, data: Vec<T>) -> Array<T> {
    // Every caller draws exactly `element_count(&dims)` elements.
    Array::from_trusted_parts(dims, data)
}

fn sample_float<R: Rng + ?Sized>(b: &FloatBox, element: usize, rng: &mut R) -> f64 {
    let (low, high) = b.bounds_of(element);
    match (low.is_finite(), high.is_finite()) {
        (true, true) if low == high => low,
        (true, true) if (high - low).is_finite() => rng.random_range(low..=high),
        // The span overflows f64 (bounds near ±1.8e308): mix the bounds instead, which stays finite.
        (true, true) => {
            let u: f64 = rng.random();
            low * (1.0 - u) + high * u
        }
        (true, false) => low + Distribution::<f64>::sample(&Exp1, rng),
        (false, true) => high - Distribution::<f64>::sample(&Exp1, rng),
        (false, false) => StandardNormal.sample(rng),
    }
}
