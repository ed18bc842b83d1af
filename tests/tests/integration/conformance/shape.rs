//! `ShapeOps`: reshapes, transposes, permutations, joins, slices, broadcasts and padding.

use super::prelude::*;

case!(reshape_and_transpose, vec![vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[shaped::<B>(B::reshape(&a, &[3, 2])?, &[3, 2])?, shaped::<B>(B::transpose(&a, 0, 1)?, &[3, 2])?])
});

// permute([2, 3, 4] of 0..24, [2, 0, 1]) has shape [4, 2, 3] and element (k, i, j) = x[i][j][k]
// = 12 i + 4 j + k, written out by hand below; a non-permutation is an error.
case!(permute_reorders_dimensions, vec![vec![
    0.0, 4.0, 8.0, 12.0, 16.0, 20.0,
    1.0, 5.0, 9.0, 13.0, 17.0, 21.0,
    2.0, 6.0, 10.0, 14.0, 18.0, 22.0,
    3.0, 7.0, 11.0, 15.0, 19.0, 23.0,
]], <B> {
    let a = f32s::<B>(&[2, 3, 4], &(0..24).map(|v| v as f32).collect::<Vec<_>>())?;
    if B::permute(&a, &[0, 0, 1]).is_ok() || B::permute(&a, &[1, 0]).is_ok() {
        return Err(CoreError::Device("a non-permutation must fail".into()));
    }
    host::<B>(&[shaped::<B>(B::permute(&a, &[2, 0, 1])?, &[4, 2, 3])?])
});

case!(concat_along_each_dim, vec![vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 5.0, 3.0, 4.0, 6.0]], <B> {
    let a = B::concat(&[f32s::<B>(&[2], &[1.0, 2.0])?, f32s::<B>(&[1], &[3.0])?], 0)?;
    let b = B::concat(&[f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?, f32s::<B>(&[2, 1], &[5.0, 6.0])?], 1)?;
    host::<B>(&[a, shaped::<B>(b, &[2, 3])?])
});

case!(narrow_takes_a_slice, vec![vec![1.0, 2.0, 3.0]], <B> {
    host::<B>(&[B::narrow(&f32s::<B>(&[5], &[0.0, 1.0, 2.0, 3.0, 4.0])?, 0, 1, 3)?])
});

case!(broadcast_to_repeats_rows, vec![vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]], <B> {
    host::<B>(&[shaped::<B>(B::broadcast_to(&f32s::<B>(&[3], &[1.0, 2.0, 3.0])?, &[2, 3])?, &[2, 3])?])
});

case!(unsqueeze_and_squeeze, vec![vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 3.0]], <B> {
    let a = shaped::<B>(B::unsqueeze(&f32s::<B>(&[3], &[1.0, 2.0, 3.0])?, 0)?, &[1, 3])?;
    let b = shaped::<B>(B::squeeze(&a, 0)?, &[3])?;
    if B::squeeze(&a, 1).is_ok() { return Err(CoreError::Device("squeeze of a size-3 dim must fail".into())); }
    host::<B>(&[a, b])
});

case!(pad_zeros_around_a_dim, vec![vec![0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0]], <B> {
    host::<B>(&[shaped::<B>(B::pad_zeros(&f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?, 1, 1, 2)?, &[2, 5])?])
});
