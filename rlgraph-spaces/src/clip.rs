//! Moving float values into a space's bounds (Gymnasium's `ClipAction`).

use crate::space::Space;
use crate::value::{Array, Value};

impl Space {
    /// `value` with every float element moved into this space's bounds, as Gymnasium's
    /// `ClipAction` does to a Normal policy's samples. Integer and bool leaves, NaN, and
    /// anything whose structure does not match the space come back unchanged, for the
    /// environment's own check to refuse.
    ///
    /// ```
    /// use rlgraph_spaces::{Array, FloatBox, Space, Value};
    ///
    /// let space = Space::from(FloatBox::bounded([2], -1.0, 1.0).unwrap());
    /// let sample = Value::Float32(Array::new(vec![2], vec![1.7, -0.25]).unwrap());
    /// assert_eq!(space.clip(&sample), Value::Float32(Array::new(vec![2], vec![1.0, -0.25]).unwrap()));
    /// ```
    pub fn clip(&self, value: &Value) -> Value {
        match (self, value) {
            (Space::Dict(d), Value::Dict(v)) => Value::Dict(
                v.iter()
                    .map(|(k, x)| (k.clone(), d.get(k).map_or_else(|| x.clone(), |s| s.clip(x))))
                    .collect(),
            ),
            (Space::Tuple(t), Value::Tuple(v)) if t.items().len() == v.len() => {
                Value::Tuple(t.items().iter().zip(v).map(|(s, x)| s.clip(x)).collect())
            }
            (Space::Float(b), Value::Float32(a)) => {
                let per_item = self.flat_dim().max(1);
                Value::Float32(clipped(a, |i, x| {
                    let (low, high) = b.bounds_of(i % per_item);
                    within(x as f64, low as f32 as f64, high as f32 as f64) as f32
                }))
            }
            (Space::Float(b), Value::Float64(a)) => {
                let per_item = self.flat_dim().max(1);
                Value::Float64(clipped(a, |i, x| {
                    let (low, high) = b.bounds_of(i % per_item);
                    within(x, low, high)
                }))
            }
            _ => value.clone(),
        }
    }

    /// Whether [`Space::clip`] can change a value: some float leaf has a finite bound.
    pub fn has_float_bounds(&self) -> bool {
        self.flatten().into_iter().any(|(_, leaf)| match leaf {
            Space::Float(b) => (0..leaf.flat_dim().max(1)).any(|i| {
                let (low, high) = b.bounds_of(i);
                low.is_finite() || high.is_finite()
            }),
            _ => false,
        })
    }
}

/// `a` with element `i` replaced by `f(i, a[i])`.
fn clipped<T: Copy>(a: &Array<T>, f: impl Fn(usize, T) -> T) -> Array<T> {
    let data = a.data().iter().enumerate().map(|(i, &x)| f(i, x)).collect();
    Array::from_trusted_parts(a.shape().to_vec(), data)
}

/// `x` moved into `[low, high]`; NaN stays NaN.
fn within(x: f64, low: f64, high: f64) -> f64 {
    if x < low {
        low
    } else if x > high {
        high
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FloatBox, IntBox};

    fn floats(shape: Vec<usize>, x: Vec<f32>) -> Value {
        Value::Float32(Array::new(shape, x).unwrap())
    }

    #[test]
    fn each_element_meets_its_own_bounds_through_batches_and_containers() {
        let per_element = Space::from(FloatBox::per_element([2], vec![-1.0, 0.0], vec![1.0, 0.5]).unwrap());
        // A batch of two actions: element 0 of each item meets [-1, 1], element 1 [0, 0.5].
        let batch = floats(vec![2, 2], vec![-3.0, 0.7, 0.25, -0.1]);
        assert_eq!(
            per_element.with_batch_rank(true).clip(&batch),
            floats(vec![2, 2], vec![-1.0, 0.5, 0.25, 0.0])
        );
        let nan = per_element.clip(&floats(vec![2], vec![f32::NAN, 2.0]));
        let Value::Float32(a) = nan else { panic!("{nan:?}") };
        assert!(
            a.data()[0].is_nan() && a.data()[1] == 0.5,
            "NaN is left for the environment to refuse"
        );
        let tuple = Space::tuple(vec![per_element.clone(), Space::from(IntBox::new(3).unwrap())]);
        let value = Value::Tuple(vec![floats(vec![2], vec![5.0, 5.0]), Value::i32(7)]);
        assert_eq!(
            tuple.clip(&value),
            Value::Tuple(vec![floats(vec![2], vec![1.0, 0.5]), Value::i32(7)]),
            "integers are not clipped"
        );
        assert!(per_element.has_float_bounds() && tuple.has_float_bounds());
        assert!(!Space::from(FloatBox::new([3])).has_float_bounds());
        assert!(!Space::from(IntBox::new(3).unwrap()).has_float_bounds());
    }
}
