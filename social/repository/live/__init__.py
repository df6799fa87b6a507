"""What a person is told: the live bus, notifications, markers and notices."""
