//! `RandomOps`: seeded draws in range with the right moments, equal on both backends.

use super::prelude::*;

case!(uniform_is_seeded_and_in_range, vec![vec![1.0, 1.0]], <B> {
    let u = B::uniform(&[10_000], -1.0, 3.0, DType::F32, test_device::<B>(), &mut ChaCha8Rng::seed_from_u64(1))?;
    let v = B::to_host(&u)?.data.to_f64();
    let in_range = v.iter().all(|&x| (-1.0..3.0).contains(&x));
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    // The mean of U(-1, 3) is 1 with standard error 4/sqrt(12 * 10000) ~ 0.012.
    let mean_ok = (mean - 1.0).abs() < 0.05;
    Ok(vec![HostTensor::f64([2], vec![f64::from(u8::from(in_range)), f64::from(u8::from(mean_ok))])?])
});

case!(normal_is_seeded_with_the_right_moments, vec![vec![1.0, 1.0]], <B> {
    let n = B::normal(&[10_000], 2.0, 0.5, DType::F64, test_device::<B>(), &mut ChaCha8Rng::seed_from_u64(2))?;
    let v = B::to_host(&n)?.data.to_f64();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
    let ok = |b: bool| f64::from(u8::from(b));
    Ok(vec![HostTensor::f64([2], vec![ok((mean - 2.0).abs() < 0.02), ok((var.sqrt() - 0.5).abs() < 0.02)])?])
});

#[test]
fn same_seed_gives_the_same_numbers_on_both_backends() {
    let a = Candle::uniform(
        &[64],
        0.0,
        1.0,
        DType::F32,
        test_device::<Candle>(),
        &mut ChaCha8Rng::seed_from_u64(9),
    )
    .unwrap();
    let b = Tch::uniform(
        &[64],
        0.0,
        1.0,
        DType::F32,
        test_device::<Tch>(),
        &mut ChaCha8Rng::seed_from_u64(9),
    )
    .unwrap();
    assert_eq!(Candle::to_host(&a).unwrap(), Tch::to_host(&b).unwrap());
}
