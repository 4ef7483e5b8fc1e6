import './base.css';
import './admin.css';
