"""Decoding a PNG the product wrote, so a test checks a picture and not only the file's magic bytes."""

from __future__ import annotations

import io

from PIL import Image, ImageStat


def png_content(data: bytes, min_size: tuple[int, int] = (200, 100)) -> Image.Image:
    """The decoded PNG; fails unless it decodes as a PNG of at least `min_size` pixels that is not
    blank: several distinct colours and a luminance spread no flat or near-flat image has."""
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    image.load()  # decodes every pixel: a truncated file fails here
    assert image.size[0] >= min_size[0] and image.size[1] >= min_size[1], image.size
    grey = image.convert("L")
    assert ImageStat.Stat(grey).stddev[0] > 5.0, "the image is (nearly) uniform"
    colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) >= 8, f"only {len(colours)} colours"
    return image
