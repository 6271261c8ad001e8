"""Click command-line layers: parse arguments, call one service function, print."""
