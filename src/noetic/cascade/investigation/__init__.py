"""Investigation: tools and plugins, strategies, and how a profile's tool mode offers them."""
