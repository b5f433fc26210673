// An outside plugin: its own module, built against a released pluginsdk and
// nothing else of Strata (no replace directive). Strata's own tests build it
// the same way, against the pluginsdk of the checkout served as its own version.
module example.org/museum/dendro

go 1.26.0

require github.com/strata-archaeo/strata/pluginsdk v0.6.0
