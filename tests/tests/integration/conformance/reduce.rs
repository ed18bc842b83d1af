//! `ReduceOps`: sums, means, maxima and minima over dimensions, and argmax.

use super::prelude::*;

case!(sum_over_dims, vec![vec![5.0, 7.0, 9.0], vec![6.0, 15.0], vec![21.0], vec![21.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[
        shaped::<B>(B::sum(&a, &[0], false)?, &[3])?,
        shaped::<B>(B::sum(&a, &[1], true)?, &[2, 1])?,
        shaped::<B>(B::sum(&a, &[0, 1], false)?, &[])?,
        shaped::<B>(B::sum_all(&a)?, &[])?,
    ])
});

case!(mean_over_dims, vec![vec![2.0, 5.0], vec![3.5]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[B::mean(&a, &[1], false)?, B::mean_all(&a)?])
});

case!(max_and_min_along_a_dim, vec![vec![3.0, 6.0], vec![1.0, 4.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 3.0, 2.0, 6.0, 4.0, 5.0])?;
    host::<B>(&[shaped::<B>(B::max(&a, 1, false)?, &[2])?, shaped::<B>(B::min(&a, 1, true)?, &[2, 1])?])
});

case!(argmax_gives_i64_indices, vec![vec![1.0, 0.0], vec![1.0, 1.0, 1.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 3.0, 2.0, 6.0, 4.0, 5.0])?;
    let rows = shaped::<B>(B::argmax(&a, 1, true)?, &[2, 1])?;
    if B::dtype(&rows) != DType::I64 { return Err(CoreError::Device("argmax dtype".into())); }
    host::<B>(&[rows, B::argmax(&a, 0, false)?])
});

// [[1, 5, 3], [4, 2, 6]] reduced over both dimensions at once (21, 3.5, 6, 1), kept as
// [1, 1], and maxima and minima along one (rows [5, 6], columns [1, 2, 3]), by hand.
case!(reductions_as_parameters_over_several_dims, vec![
    vec![21.0],
    vec![3.5],
    vec![6.0],
    vec![1.0],
    vec![5.0, 6.0],
    vec![1.0, 2.0, 3.0],
], <B> {
    let t = f32s::<B>(&[2, 3], &[1.0, 5.0, 3.0, 4.0, 2.0, 6.0])?;
    let both = [ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min]
        .iter()
        .map(|&op| shaped::<B>(B::reduce(op, &t, &[0, 1], true)?, &[1, 1]))
        .collect::<Result<Vec<_>>>()?;
    let rows = shaped::<B>(B::reduce(ReduceOp::Max, &t, &[1], false)?, &[2])?;
    let cols = shaped::<B>(B::reduce(ReduceOp::Min, &t, &[0], false)?, &[3])?;
    host::<B>(&[both, vec![rows, cols]].concat())
});
