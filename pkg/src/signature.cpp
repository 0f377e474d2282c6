// ireepkg signatures (being written).
