"""Remote transports: git, and the GitHub Git Database API."""
