//! Proves that candle computes on this machine.

use candle_core::{Device, Tensor, Var};

#[test]
fn matmul_and_add_run_through_candle() -> candle_core::Result<()> {
    // [[1, 2], [3, 4]] x [[5], [6]] = [[17], [39]] (by hand), then + 1.
    let a = Tensor::new(&[[1.0f32, 2.0], [3.0, 4.0]], &Device::Cpu)?;
    let b = Tensor::new(&[[5.0f32], [6.0]], &Device::Cpu)?;
    let c = (a.matmul(&b)? + 1.0)?;
    assert_eq!(c.dims(), &[2, 1]);
    assert_eq!(c.flatten_all()?.to_vec1::<f32>()?, vec![18.0, 40.0]);
    Ok(())
}

#[test]
fn gradient_of_a_square_is_twice_the_input() -> candle_core::Result<()> {
    let x = Var::new(&[3.0f64], &Device::Cpu)?;
    let y = x.as_tensor().sqr()?.sum_all()?;
    let grads = y.backward()?;
    let g = grads.get(x.as_tensor()).expect("x took part in y");
    assert_eq!(g.to_vec1::<f64>()?, vec![6.0]);
    Ok(())
}
