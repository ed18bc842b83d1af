//! Variables' gradients handed from a layer's backward straight to [`crate::Candle`]'s `grads`,
//! past candle's gradient store.
//!
//! Why: candle's backward accumulates every gradient it is handed into a fresh zero tensor
//! (`zeros + g`: an allocation, a fill and an add per variable and step). For the MinAtar
//! reference's DQN, whose 1,024-by-128 dense weight is most of its 160k numbers, that was about
//! a tenth of an update. A layer's own backward (dense, convolution) instead gives a variable's
//! gradient here while `grads` collects; a variable used twice has its gradients added, first
//! to last, as candle adds them (so the numbers are candle's, a zero's sign aside).

use std::cell::RefCell;
use std::collections::HashMap;

use candle_core::{Result, Tensor, TensorId};

thread_local! {
    /// The gradients collected by the innermost [`collecting`] call on this thread, if any.
    static SINK: RefCell<Option<HashMap<TensorId, Tensor>>> = const { RefCell::new(None) };
}

/// `f()` (a backward pass) with the sink open on this thread, and the gradients it collected.
pub(crate) fn collecting<R>(f: impl FnOnce() -> R) -> (R, HashMap<TensorId, Tensor>) {
    let outer = SINK.with(|s| s.replace(Some(HashMap::new())));
    let out = f();
    let collected = SINK.with(|s| s.replace(outer)).unwrap_or_default();
    (out, collected)
}

/// `grad`, the gradient of `arg`: kept in the open sink (and `None` returned, so candle's store
/// never sees it) where `arg` is a variable; returned as it is otherwise.
pub(crate) fn divert(arg: &Tensor, grad: Option<Tensor>) -> Result<Option<Tensor>> {
    let Some(grad) = grad else { return Ok(None) };
    if !arg.is_variable() {
        return Ok(Some(grad));
    }
    SINK.with(|s| {
        let mut sink = s.borrow_mut();
        let Some(sink) = sink.as_mut() else {
            return Ok(Some(grad));
        };
        let sum = match sink.remove(&arg.id()) {
            Some(earlier) => earlier.add(&grad)?,
            None => grad,
        };
        sink.insert(arg.id(), sum);
        Ok(None)
    })
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor, Var};
    use rlgraph_core::backend::prelude::*;

    use crate::test_values::{bits, values};
    use crate::Candle;

    fn var(dims: &[usize], seed: u32) -> Var {
        let n = dims.iter().product();
        Var::from_tensor(&Tensor::from_vec(values(n, seed), dims, &Device::Cpu).unwrap()).unwrap()
    }

    /// A convolution with its bias, then a dense layer applied twice (its weight's gradient
    /// added from two uses) and squared into the loss with its own weight once more (a third
    /// use, outside any layer): the sink's gradients against candle's store of the same pass.
    #[test]
    fn grads_through_the_sink_equal_candles_store() {
        let x = Tensor::from_vec(values(2 * 3 * 5 * 5, 9), (2, 3, 5, 5), &Device::Cpu).unwrap();
        let (k, cb) = (var(&[4, 3, 3, 3], 1), var(&[4], 2));
        let (w, b) = (var(&[36, 36], 3), var(&[36], 4));
        let loss = || {
            let y = Candle::conv2d_nhwc(&x, &k, Some(&cb), 1, 0).unwrap();
            let h = Candle::reshape(&y, &[2, 36]).unwrap();
            let h = Candle::linear(&Candle::linear(&h, &w, &b).unwrap(), &w, &b).unwrap();
            (h.sqr().unwrap().sum_all().unwrap() + w.as_tensor().sqr().unwrap().sum_all().unwrap()).unwrap()
        };
        let vars = [&k, &cb, &w, &b];
        let ours = Candle::grads(&loss(), &vars).unwrap();
        let store = loss().backward().unwrap();
        for (v, g) in vars.iter().zip(&ours) {
            let theirs = store.get(v.as_tensor()).expect("candle's store has every gradient");
            assert_eq!(g.dims(), theirs.dims());
            let close = g
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
                .iter()
                .zip(theirs.flatten_all().unwrap().to_vec1::<f32>().unwrap())
                .all(|(a, b)| (a - b).abs() <= 1e-5 * b.abs().max(1.0));
            assert!(close, "{:?}", v.dims());
        }
        // One use per layer: the same bits as candle's store (its zero start adds nothing).
        let loss_once = || {
            let y = Candle::conv2d_nhwc(&x, &k, Some(&cb), 1, 0).unwrap();
            let h = Candle::linear(&Candle::reshape(&y, &[2, 36]).unwrap(), &w, &b).unwrap();
            h.sqr().unwrap().sum_all().unwrap()
        };
        let ours = Candle::grads(&loss_once(), &vars).unwrap();
        let store = loss_once().backward().unwrap();
        for (v, g) in vars.iter().zip(&ours) {
            assert_eq!(bits(g), bits(store.get(v.as_tensor()).unwrap()), "{:?}", v.dims());
        }
        // And no sink is left open: candle's own backward keeps every gradient.
        assert!(loss_once().backward().unwrap().get(w.as_tensor()).is_some());
    }
}
