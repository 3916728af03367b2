"""Caffe's random streams, draw for draw: boost's mt19937 and the boost 1.74 distributions Caffe uses.

`caffe_stream.CaffeStream` is Caffe's RNG (`caffe_rng_rand`, `caffe_rng_uniform`, `caffe_rng_gaussian`,
`caffe_rng_bernoulli`, `caffe::shuffle`); `mt19937` holds the generator; `boost_*` are the distributions,
vectorised over numpy with the rare draws that boost rejects or redraws replayed one at a time.
"""
