"""The arena's running parts: the match queue (RQ on Redis), its jobs and workers, the embedded Redis of
``arena up``, and the supervision that starts, restarts and stops them."""
