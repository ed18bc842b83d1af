//! `IndexOps`: selection, gathering and scattering by index, and one-hot encoding.

use super::prelude::*;

case!(index_select_rows, vec![vec![5.0, 6.0, 1.0, 2.0]], <B> {
    let t = f32s::<B>(&[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[B::index_select(&t, 0, &i64s::<B>(&[2], &[2, 0])?)?])
});

case!(gather_along_dim_1, vec![vec![3.0, 4.0]], <B> {
    let t = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[B::gather(&t, 1, &i64s::<B>(&[2, 1], &[2, 0])?)?])
});

case!(scatter_add_accumulates, vec![vec![3.0, 0.0, 0.0, 0.0, 4.0, 3.0]], <B> {
    let t = B::full(&[2, 3], 0.0, DType::F32, test_device::<B>())?;
    let idx = i64s::<B>(&[2, 2], &[0, 0, 2, 1])?;
    host::<B>(&[B::scatter_add(&t, 1, &idx, &f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?)?])
});

case!(one_hot_of_indices, vec![vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0]], <B> {
    host::<B>(&[shaped::<B>(B::one_hot(&i64s::<B>(&[2], &[2, 0])?, 3, DType::F32)?, &[2, 3])?])
});
