//! Episodes as animated GIFs: the frames an environment renders, encoded with the `gif` crate.

use std::collections::HashMap;
use std::path::Path;

use rlgraph_envs::RgbFrame;

/// Frames per second of the videos (Gymnasium's classic-control `render_fps`).
pub const FPS: u16 = 50;

/// Writes `frames` (all of one size) as an animated GIF at [`FPS`] to `path`, looping. Frames
/// with at most 256 colours (the classic-control drawings) are stored exactly; others are
/// quantized.
pub fn write_gif(path: &Path, frames: &[RgbFrame]) -> Result<(), String> {
    let first = frames
        .first()
        .ok_or_else(|| format!("{}: no frames to write", path.display()))?;
    let (width, height) = (first.width, first.height);
    let size = |n: usize| {
        u16::try_from(n).map_err(|_| format!("{}: a frame {width}x{height} is too large for a GIF", path.display()))
    };
    let (w, h) = (size(width)?, size(height)?);
    let mut bytes = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut bytes, w, h, &[]).map_err(|e| e.to_string())?;
        encoder.set_repeat(gif::Repeat::Infinite).map_err(|e| e.to_string())?;
        for (i, frame) in frames.iter().enumerate() {
            if (frame.width, frame.height) != (width, height) {
                return Err(format!(
                    "{}: frame {i} is {}x{}, the first {width}x{height}",
                    path.display(),
                    frame.width,
                    frame.height
                ));
            }
            let mut gif_frame =
                exact_palette(frame).unwrap_or_else(|| gif::Frame::from_rgb_speed(w, h, &frame.pixels, 10));
            gif_frame.delay = 100 / FPS;
            encoder.write_frame(&gif_frame).map_err(|e| e.to_string())?;
        }
    }
    rlgraph_core::write_atomically(path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The frame with a palette of exactly its colours, where it has at most 256.
fn exact_palette(frame: &RgbFrame) -> Option<gif::Frame<'static>> {
    let mut index: HashMap<[u8; 3], u8> = HashMap::new();
    let mut palette = Vec::new();
    let mut indices = Vec::with_capacity(frame.width * frame.height);
    for p in frame.pixels.chunks_exact(3) {
        let colour = [p[0], p[1], p[2]];
        let i = match index.get(&colour) {
            Some(&i) => i,
            None => {
                let i = u8::try_from(index.len()).ok()?;
                index.insert(colour, i);
                palette.extend_from_slice(&colour);
                i
            }
        };
        indices.push(i);
    }
    Some(gif::Frame {
        width: frame.width as u16,
        height: frame.height as u16,
        buffer: indices.into(),
        palette: Some(palette),
        ..gif::Frame::default()
    })
}
