package fieldsync

import "github.com/strata-archaeo/strata/core/api"

func (h *handlers) pullRoutes() []api.Route { return nil }
