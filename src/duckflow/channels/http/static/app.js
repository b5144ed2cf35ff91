document.getElementById('login-state').textContent='ready';
