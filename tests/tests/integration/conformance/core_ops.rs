//! `BackendCore`: uploads and downloads of every dtype, creation, casts, precision, `sync`, and errors for bad shapes.

use super::prelude::*;

case!(host_round_trip_all_dtypes, vec![vec![1.0, 2.0, 3.0, 4.0], vec![0.5, -1.5], vec![-3.0, 7.0], vec![0.0, 255.0]], <B> {
    let hosts = [
        HostTensor::f32([2, 2], vec![1.0, 2.0, 3.0, 4.0])?,
        HostTensor::f64([2], vec![0.5, -1.5])?,
        HostTensor::i64([2], vec![-3, 7])?,
        HostTensor::u8([2], vec![0, 255])?,
    ];
    let ts: Vec<B::Tensor> = hosts.iter().map(|h| B::from_host(h, test_device::<B>())).collect::<Result<_>>()?;
    let back = host::<B>(&ts)?;
    if back != hosts {
        return Err(CoreError::Backend { backend: B::NAME, op: "test", message: format!("{back:?}") });
    }
    Ok(back)
});

case!(full_and_scalar, vec![vec![2.5, 2.5], vec![3.0]], <B> {
    let a = shaped::<B>(B::full(&[2], 2.5, DType::F32, test_device::<B>())?, &[2])?;
    let b = shaped::<B>(B::scalar(3.0, DType::I64, test_device::<B>())?, &[])?;
    if B::dtype(&b) != DType::I64 { return Err(CoreError::Device("dtype".into())); }
    host::<B>(&[a, b])
});

case!(arange_counts_from_zero, vec![vec![0.0, 1.0, 2.0, 3.0]], <B> {
    host::<B>(&[B::arange(4, test_device::<B>())?])
});

case!(cast_truncates_toward_zero, vec![vec![1.0, -1.0, 2.0], vec![3.0, -4.0]], <B> {
    let a = B::cast(&f32s::<B>(&[3], &[1.7, -1.7, 2.0])?, DType::I64)?;
    let b = B::cast(&i64s::<B>(&[2], &[3, -4])?, DType::F32)?;
    host::<B>(&[a, b])
});

case!(f64_precision_is_kept, vec![vec![1.0 + 1e-12]], <B> {
    let a = B::from_host(&HostTensor::f64([1], vec![1.0])?, test_device::<B>())?;
    let b = B::from_host(&HostTensor::f64([1], vec![1e-12])?, test_device::<B>())?;
    let c = B::add(&a, &b)?;
    let h = B::to_host(&c)?;
    if h.data.to_f64()[0] == 1.0 { return Err(CoreError::Device("f64 lost precision".into())); }
    Ok(vec![h])
});

#[test]
fn shape_errors_are_errors_not_panics() {
    fn run<B: Backend>() {
        let a = f32s::<B>(&[2, 3], &[0.0; 6]).unwrap();
        let b = f32s::<B>(&[4], &[0.0; 4]).unwrap();
        assert!(B::add(&a, &b).is_err(), "{}", B::NAME);
        assert!(B::matmul(&a, &a).is_err(), "{}", B::NAME);
        assert!(B::reshape(&a, &[5]).is_err(), "{}", B::NAME);
        assert!(HostTensor::f32([3], vec![1.0]).is_err());
        // Built by hand past that check, a shape that does not hold the data is refused,
        // not read past the end of it.
        let torn = HostTensor {
            shape: vec![1000],
            data: rlgraph_core::HostData::F32(vec![1.0]),
        };
        assert!(B::from_host(&torn, test_device::<B>()).is_err(), "{}", B::NAME);
    }
    run::<Candle>();
    run::<Tch>();
}

// `sync` waits for queued work: a product computed, synchronized, then read back; on the
// CPU it is a no-op. [[1, 2], [3, 4]] x [[1], [1]] = [[3], [7]] by hand.
case!(sync_after_queued_work, vec![vec![3.0, 7.0]], <B> {
    let a = B::from_host(&HostTensor::f32([2, 2], vec![1.0, 2.0, 3.0, 4.0])?, test_device::<B>())?;
    let b = B::from_host(&HostTensor::f32([2, 1], vec![1.0, 1.0])?, test_device::<B>())?;
    let c = B::matmul(&a, &b)?;
    B::sync(test_device::<B>())?;
    host::<B>(&[c])
});

#[test]
fn sync_on_a_device_that_does_not_exist_is_an_error_naming_it() {
    fn run<B: Backend>() -> String {
        match B::sync(rlgraph_core::Device::Cuda(99)) {
            Ok(()) => panic!("{}: cuda:99 synchronized", B::NAME),
            Err(e) => e.to_string(),
        }
    }
    for message in [run::<Candle>(), run::<Tch>()] {
        assert!(message.contains("cuda") || message.contains("99"), "{message}");
    }
}
