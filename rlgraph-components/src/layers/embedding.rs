//! Embedding lookup: integer ids to rows of a learned `[vocab_size, embed_dim]` table.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, DType, GraphFn, Initializer, Param, VarDecl};

/// `call(ids)`: for ids of any shape, the embeddings, shape `ids.shape + [embed_dim]`.
pub fn embedding<B: Backend>(name: &str, vocab_size: usize, embed_dim: usize, init: Initializer) -> Component<B> {
    Component::new(name)
        .with_kind("embedding")
        .api("call", vec![Param::new("ids")], |ctx, args| {
            ctx.graph_fn("lookup", &[args.get(0)?])
        })
        .check_inputs(move |s| {
            s.expect(
                "ids",
                &format!("an IntBox with at most {vocab_size} categories"),
                |sp| matches!(sp, Space::Int(_)) && sp.num_categories().is_some_and(|n| n <= vocab_size as u64),
            )
        })
        .variables(move |_| Ok(vec![VarDecl::new("embeddings", [vocab_size, embed_dim], init.clone())]))
        .graph_fn(
            GraphFn::tensors("lookup", move |ctx, xs| {
                let shape = B::shape(xs[0]);
                let n: usize = shape.iter().product();
                let flat = B::reshape(&B::cast(xs[0], DType::I64)?, &[n])?;
                let rows = B::index_select(ctx.var("embeddings")?, 0, &flat)?;
                let mut out = shape;
                out.push(embed_dim);
                Ok(vec![B::reshape(&rows, &out)?])
            })
            .infer(move |_, s| {
                let mut shape = s[0].shape().unwrap_or(&[]).to_vec();
                shape.push(embed_dim);
                Ok(vec![
                    Space::from(FloatBox::new(shape)).with_ranks(s[0].ranks().unwrap_or_default())
                ])
            }),
        )
}
