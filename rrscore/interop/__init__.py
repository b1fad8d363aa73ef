"""Reading other programs' files into rrscore configs (:mod:`.openrails`: Open Rails and
MSTS rolling stock)."""
