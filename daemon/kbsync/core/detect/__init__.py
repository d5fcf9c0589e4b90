"""Floor 1 (core), the detectors: the embedded-instruction detector (injection, its rules, the learned
classifier) and the secret scan, with what they share: text folded for matching (normalize, charshape),
encoded runs decoded (unveil), and the searches that try a pattern only where a match can start (anchors,
lazylead). Pure, like the rest of core.

These modules import one another and the root floor; nothing of the rest of core imports them but
core.transcript (which masks secrets). Two files shipped in kbsync/data are read once and lazily: the
secret rules and the stored prefixes of the detector's rules (and the classifier's weights)."""
