//! Episodes as animated GIFs: the frames an environment renders, encoded with the `gif` crate
//! as they come (an episode's frames are never all in memory at once).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use rlgraph_envs::RgbFrame;

/// Frames per second of the videos (Gymnasium's classic-control `render_fps`).
pub const FPS: u16 = 50;

/// An animated GIF being written: frames of one size at [`FPS`], looping. Frames with at
/// most 256 colours (the classic-control drawings) are stored exactly; others are quantized.
/// It is written to a temporary file beside `path` and renamed there by [`GifWriter::finish`].
pub struct GifWriter {
    path: PathBuf,
    partial: PathBuf,
    size: (u16, u16),
    encoder: gif::Encoder<BufWriter<File>>,
}

impl GifWriter {
    /// Starts the GIF `path` with its first frame.
    pub fn start(path: &Path, first: &RgbFrame) -> Result<Self, String> {
        let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let size = |n: usize| {
            u16::try_from(n).map_err(|_| {
                at(&format!(
                    "a frame {}x{} is too large for a GIF",
                    first.width, first.height
                ))
            })
        };
        let (w, h) = (size(first.width)?, size(first.height)?);
        let partial = path.with_extension("gif.partial");
        let file = File::create(&partial).map_err(|e| at(&e))?;
        let mut encoder = gif::Encoder::new(BufWriter::new(file), w, h, &[]).map_err(|e| at(&e))?;
        encoder.set_repeat(gif::Repeat::Infinite).map_err(|e| at(&e))?;
        let mut writer = GifWriter {
            path: path.to_path_buf(),
            partial,
            size: (w, h),
            encoder,
        };
        writer.push(first)?;
        Ok(writer)
    }

    /// Appends a frame of the first frame's size.
    pub fn push(&mut self, frame: &RgbFrame) -> Result<(), String> {
        let (w, h) = self.size;
        if (frame.width, frame.height) != (w as usize, h as usize) {
            return Err(format!(
                "{}: a frame of {}x{} after frames of {w}x{h}",
                self.path.display(),
                frame.width,
                frame.height
            ));
        }
        let mut gif_frame =
            exact_palette(frame, w, h).unwrap_or_else(|| gif::Frame::from_rgb_speed(w, h, &frame.pixels, 10));
        gif_frame.delay = 100 / FPS;
        self.encoder
            .write_frame(&gif_frame)
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }

    /// Ends the GIF and moves it to its path.
    pub fn finish(self) -> Result<(), String> {
        let at = |e: &dyn std::fmt::Display| format!("{}: {e}", self.path.display());
        let mut file = self.encoder.into_inner().map_err(|e| at(&e))?;
        std::io::Write::flush(&mut file).map_err(|e| at(&e))?;
        drop(file);
        std::fs::rename(&self.partial, &self.path).map_err(|e| at(&e))
    }
}

/// The frame with a palette of exactly its colours, where it has at most 256.
fn exact_palette(frame: &RgbFrame, width: u16, height: u16) -> Option<gif::Frame<'static>> {
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
        width,
        height,
        buffer: indices.into(),
        palette: Some(palette),
        ..gif::Frame::default()
    })
}
