// ireepkg resolver (being written).
