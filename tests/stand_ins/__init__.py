"""Stand-ins, written here, for five kinds of tensor-keyed cache found in public
serving and kernel code; ``tests/test_real_caches.py`` audits each."""
