struct Guard { Guard(); ~Guard(); int v; };
Guard guard;
