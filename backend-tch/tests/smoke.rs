//! Proves that libtorch is linked, loads, and computes through `tch`.

use tch::{Device, Kind, Tensor};

#[test]
fn matmul_and_add_run_through_libtorch() {
    // [[1, 2], [3, 4]] x [[5], [6]] = [[17], [39]] (by hand), then + 1.
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).reshape([2, 2]);
    let b = Tensor::from_slice(&[5.0f32, 6.0]).reshape([2, 1]);
    let c = a.matmul(&b) + 1.0;
    assert_eq!(c.size(), vec![2, 1]);
    assert_eq!(c.kind(), Kind::Float);
    assert_eq!(c.device(), Device::Cpu);
    let values: Vec<f32> = Vec::try_from(c.flatten(0, -1)).expect("f32 tensor converts to Vec");
    assert_eq!(values, vec![18.0, 40.0]);
}

#[test]
fn gradient_of_a_square_is_twice_the_input() {
    let x = Tensor::from_slice(&[3.0f64]).set_requires_grad(true);
    let y = (&x * &x).sum(Kind::Double);
    y.backward();
    let g: Vec<f64> = Vec::try_from(x.grad()).expect("f64 gradient converts to Vec");
    assert_eq!(g, vec![6.0]);
}
